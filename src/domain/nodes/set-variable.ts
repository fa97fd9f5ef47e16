import { Type, type Static } from '@sinclair/typebox'
import { VariableName } from '../flow-definition.js'
import { AnyKey } from '../schemas.js'
import { typeOfValue } from '../variables.js'
import { article, checkTarget } from './checks.js'
import { UNNAMED_EXIT, type CheckContext, type NodeOf, type Step, type Visit } from './node-type.js'

/** Assigns a value to a variable: a string with `{{…}}` filled in, a number, a boolean, or an object copied as written. */
export const schema = Type.Object({
  variable: VariableName,
  value: Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Record(AnyKey, Type.Unknown())]),
})
export type Data = Static<typeof schema>

export const exits = () => UNNAMED_EXIT

export const writes = (data: Readonly<Record<string, unknown>>) => (typeof data.variable === 'string' ? data.variable : undefined)

export const copiedAsWritten = (key: string, value: unknown) => key === 'value' && typeof value !== 'string'

export const check = ({ variable, value }: Data, context: CheckContext): void => {
  const type = typeOfValue(value)
  if (type) checkTarget(variable, type, `this value is ${article(type)}`, ['variable'], context)
}

export const run = ({ data: { variable, value } }: NodeOf<typeof schema>, visit: Visit): Step => {
  visit.assign(variable, typeof value === 'string' ? visit.interpolating((text) => text(value)) : structuredClone(value))
  return { exit: null }
}
