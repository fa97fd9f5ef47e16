import { Type, type Static } from '@sinclair/typebox'
import { RE2JS } from 're2js'
import { VariableName } from '../flow-definition.js'
import { judge } from '../conditions.js'
import { lookup } from '../interpolate.js'
import { parseNumber } from '../replies.js'
import { checkHandleIds } from './checks.js'
import { DEFAULT_HANDLE, type CheckContext, type Exit, type NodeOf, type Step, type Visit } from './node-type.js'

export const OPERATORS = ['equals', 'not_equals', 'contains', 'starts_with', 'gt', 'gte', 'lt', 'lte', 'exists', 'regex'] as const
export type Operator = (typeof OPERATORS)[number]
export const NUMERIC_OPERATORS: readonly Operator[] = ['gt', 'gte', 'lt', 'lte']

/** Leaves by the id of its first rule that matches, else by `default`. */
export const schema = Type.Object({
  rules: Type.Array(
    Type.Object({
      id: Type.String({ minLength: 1 }),
      variable: VariableName,
      operator: Type.Union(OPERATORS.map((operator) => Type.Literal(operator))),
      value: Type.Optional(Type.Union([Type.String(), Type.Number(), Type.Boolean()])),
    }),
    { minItems: 1 },
  ),
})
export type Data = Static<typeof schema>
export type Rule = Data['rules'][number]

export const exits = (data: Partial<Data>): Exit[] => [...(data.rules ?? []).map((rule) => ({ id: rule.id, label: rule.id })), { id: DEFAULT_HANDLE, label: DEFAULT_HANDLE, kind: 'default' }]

export const check = ({ rules }: Data, context: CheckContext): void => {
  const { known, report } = context
  checkHandleIds(rules.map((rule, i) => ({ id: rule.id, at: ['rules', i, 'id'] })), context, { handle: DEFAULT_HANDLE, of: 'the default exit' })
  rules.forEach((rule, i) => {
    const at = ['rules', i]
    if (!known.has(rule.variable)) report([...at, 'variable'], `unknown variable "${rule.variable}"`)
    if (rule.operator === 'regex' && typeof rule.value === 'string') {
      try {
        RE2JS.compile(rule.value)
      } catch (error) {
        report([...at, 'value'], `not a valid regular expression: ${error instanceof Error ? error.message : String(error)}`)
      }
    }
    const numeric = NUMERIC_OPERATORS.includes(rule.operator)
    const isNumber = typeof rule.value === 'number' || (typeof rule.value === 'string' && parseNumber(rule.value) !== undefined)
    if (numeric && !isNumber) report([...at, 'value'], `${rule.operator} compares numbers; value must be a number`)
  })
}

export const run = (node: NodeOf<typeof schema>, visit: Visit): Step => {
  for (const rule of node.data.rules) {
    const verdict = judge(rule, lookup(visit.scope(), rule.variable))
    if (verdict.problem) visit.warn(`rule ${rule.id} of node ${node.id}: ${verdict.problem}`)
    if (verdict.matched) return { exit: rule.id }
  }
  return { exit: DEFAULT_HANDLE }
}
