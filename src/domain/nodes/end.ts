import { Type, type Static } from '@sinclair/typebox'
import { NO_EXITS, type Step, type Visit } from './node-type.js'

/** Finishes the session. */
export const schema = Type.Object({})
export type Data = Static<typeof schema>

export const exits = () => NO_EXITS

export const run = (_node: unknown, visit: Visit): Step => {
  visit.call({ type: 'finish' })
  return 'complete'
}
