import { RE2JS } from 're2js'
import { render } from './interpolate.js'
import type { Rule } from './nodes/condition.js'
import { parseNumber } from './replies.js'

export type { Rule }

/** Whether a rule matched, and why it could not be judged when it could not. */
export type Verdict = { matched: boolean; problem?: string }

const asNumber = (value: unknown): number | undefined => {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined
  return typeof value === 'string' ? parseNumber(value) : undefined
}

const compareNumbers = (actual: unknown, expected: unknown, holds: (a: number, b: number) => boolean): boolean => {
  const a = asNumber(actual)
  const b = asNumber(expected)
  return a !== undefined && b !== undefined && holds(a, b)
}

const equal = (actual: unknown, expected: unknown): boolean =>
  typeof actual === 'number' && typeof expected === 'number' ? actual === expected : render(actual) === render(expected)

// RE2 matches in time linear in the input, so a flow's pattern cannot stall the engine
// (no catastrophic backtracking); it rejects backreferences and lookarounds as unsupported.
const regex = (pattern: string, input: string): Verdict => {
  try {
    return { matched: RE2JS.compile(pattern).matcher(input).find() }
  } catch (error) {
    return { matched: false, problem: `invalid regex: ${error instanceof Error ? error.message : String(error)}` }
  }
}

/**
 * Judges one rule against the variable's current value (undefined when unset). An unset variable
 * reads as the empty string for the text operators and never matches the numeric ones.
 */
export const judge = (rule: Rule, actual: unknown): Verdict => {
  const expected = rule.value
  switch (rule.operator) {
    case 'equals':
      return { matched: equal(actual, expected) }
    case 'not_equals':
      return { matched: !equal(actual, expected) }
    case 'contains':
      return { matched: render(actual).toLowerCase().includes(render(expected).toLowerCase()) }
    case 'starts_with':
      return { matched: render(actual).toLowerCase().startsWith(render(expected).toLowerCase()) }
    case 'gt':
      return { matched: compareNumbers(actual, expected, (a, b) => a > b) }
    case 'gte':
      return { matched: compareNumbers(actual, expected, (a, b) => a >= b) }
    case 'lt':
      return { matched: compareNumbers(actual, expected, (a, b) => a < b) }
    case 'lte':
      return { matched: compareNumbers(actual, expected, (a, b) => a <= b) }
    case 'exists':
      return { matched: actual !== undefined && actual !== null && actual !== '' }
    case 'regex':
      return regex(render(expected), render(actual))
    default: {
      const unknown: never = rule.operator
      return { matched: false, problem: `unknown operator ${String(unknown)}` }
    }
  }
}
