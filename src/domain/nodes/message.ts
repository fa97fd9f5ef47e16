import { Type, type Static } from '@sinclair/typebox'
import { OutgoingMessage } from '../flow-definition.js'
import { UNNAMED_EXIT, type NodeOf, type Step, type Visit } from './node-type.js'

/** Sends one or more messages, then follows its exit. */
export const schema = Type.Object({ messages: Type.Array(OutgoingMessage, { minItems: 1 }) })
export type Data = Static<typeof schema>

export const exits = () => UNNAMED_EXIT

export const messages = (data: Readonly<Record<string, unknown>>) => (Array.isArray(data.messages) ? data.messages : []).map((value: unknown, i) => ({ value, at: ['messages', i] }))

export const run = (node: NodeOf<typeof schema>, visit: Visit): Step => {
  visit.send(node.data.messages)
  return { exit: null }
}
