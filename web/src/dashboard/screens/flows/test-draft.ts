import type { Expectation, ExpectedMessage, TestBody, TestStep, TextMatch } from './api-types'

// A conversation test being edited before it is saved: the test in the API's own shape, changed a
// check at a time. A turn is 0 for the session's start, then 1, 2, … for the test's steps.

/** How an expected message's words are checked; `any`: they are not. */
export const MATCH_KINDS = ['equals', 'contains', 'pattern', 'any'] as const
export type MatchKind = (typeof MATCH_KINDS)[number]

export const matchKindOf = (match: TextMatch | undefined): MatchKind => (!match ? 'any' : 'equals' in match ? 'equals' : 'contains' in match ? 'contains' : 'pattern')

export const matchTextOf = (match: TextMatch | undefined): string => (!match ? '' : 'equals' in match ? match.equals : 'contains' in match ? match.contains : match.pattern)

export function textMatch(kind: MatchKind, text: string): TextMatch | undefined {
  switch (kind) {
    case 'equals':
      return { equals: text }
    case 'contains':
      return { contains: text }
    case 'pattern':
      return { pattern: text }
    case 'any':
      return undefined
    default: {
      const exhaustive: never = kind
      return exhaustive
    }
  }
}

/** What the bot must do on `turn`: the start's expectation, or a step's. */
export const expectationAt = (test: TestBody, turn: number): Expectation | undefined => (turn === 0 ? test.start : test.steps[turn - 1]?.expect)

function withExpectation(test: TestBody, turn: number, expect: Expectation): TestBody {
  if (turn === 0) return { ...test, start: expect }
  return { ...test, steps: test.steps.map((step, index) => (index === turn - 1 ? { ...step, expect } : step)) }
}

const withWords = ({ text: _checked, ...message }: ExpectedMessage, text: TextMatch | undefined): ExpectedMessage => (text ? { ...message, text } : message)

/** The test with the words of message `index` of `turn` checked by `match` (none: not checked). */
export function withMessageMatch(test: TestBody, turn: number, index: number, match: TextMatch | undefined): TestBody {
  const expect = expectationAt(test, turn) ?? {}
  return withExpectation(test, turn, { ...expect, messages: (expect.messages ?? []).map((message, i) => (i === index ? withWords(message, match) : message)) })
}

/** The test with step `turn`'s text message saying `body`. */
export function withSentText(test: TestBody, turn: number, body: string): TestBody {
  return { ...test, steps: test.steps.map((step, index): TestStep => (index === turn - 1 && 'send' in step && step.send.type === 'text' ? { ...step, send: { type: 'text', text: { body } } } : step)) }
}

const VARIABLE = 'variables.'
/** The checks of a turn other than its variables, in the order a turn's result reads: what it said and did, its variables between them, then where it stopped. */
const SAID = ['messages', 'transfer', 'finish'] as const
const STOPPED = ['visits', 'waitsAt', 'status', 'kanban'] as const
type WholeCheck = (typeof SAID)[number] | (typeof STOPPED)[number]

/** Each check of an expectation a person keeps or drops, by name: `messages`, `waitsAt`, … and one `variables.<name>` per variable. */
export function checksOf(expect: Expectation | undefined): string[] {
  if (!expect) return []
  const present = (check: WholeCheck) => expect[check] !== undefined
  return [...SAID.filter(present), ...Object.keys(expect.variables ?? {}).map((name) => `${VARIABLE}${name}`), ...STOPPED.filter(present)]
}

/** The variable a check is about, for a `variables.<name>` check. */
export const variableOf = (check: string): string | undefined => (check.startsWith(VARIABLE) ? check.slice(VARIABLE.length) : undefined)

const isWhole = (check: string): check is WholeCheck => [...SAID, ...STOPPED].some((whole) => whole === check)

function withoutCheck(expect: Expectation, check: string): Expectation {
  const variable = variableOf(check)
  if (variable !== undefined) {
    const { variables: all = {}, ...rest } = expect
    const variables = Object.fromEntries(Object.entries(all).filter(([name]) => name !== variable))
    return Object.keys(variables).length > 0 ? { ...rest, variables } : rest
  }
  return Object.fromEntries(Object.entries(expect).filter(([key]) => key !== check))
}

function withCheckOf(expect: Expectation, original: Expectation, check: string): Expectation {
  const variable = variableOf(check)
  const value = variable === undefined ? undefined : Object.entries(original.variables ?? {}).find(([name]) => name === variable)?.[1]
  if (variable !== undefined && value !== undefined) return { ...expect, variables: { ...expect.variables, [variable]: value } }
  return isWhole(check) ? { ...expect, [check]: original[check] } : expect
}

/** The test with `check` of `turn` kept (as `original` has it) or dropped. */
export function withCheck(test: TestBody, original: TestBody, turn: number, check: string, kept: boolean): TestBody {
  const expect = expectationAt(test, turn) ?? {}
  return withExpectation(test, turn, kept ? withCheckOf(expect, expectationAt(original, turn) ?? {}, check) : withoutCheck(expect, check))
}

/** The fields of the form a refusal may name: the name, each text sent, each message's words. */
export function fieldsOf(test: TestBody): string[] {
  const turns = [0, ...test.steps.map((_step, index) => index + 1)]
  return [
    'name',
    ...test.steps.map((_step, index) => `steps.${index}.send`),
    ...turns.flatMap((turn) => (expectationAt(test, turn)?.messages ?? []).map((_message, index) => messagePath(turn, index))),
  ]
}

/** Where the API's schema puts message `index` of `turn` (`start.messages.0`, `steps.1.expect.messages.0`). */
export const messagePath = (turn: number, index: number): string => (turn === 0 ? `start.messages.${index}` : `steps.${turn - 1}.expect.messages.${index}`)
