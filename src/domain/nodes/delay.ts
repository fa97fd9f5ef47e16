import { Type, type Static } from '@sinclair/typebox'
import { UNNAMED_EXIT, type NodeOf, type Step, type Visit } from './node-type.js'

export const DELAY_SECONDS = { min: 1, max: 24 * 3600 } as const

/**
 * Pauses the flow: the turn ends, and `seconds` later the session's timer runs a new turn that goes
 * on by the exit (its messages reach the callback in a webhook of their own). Messages the user
 * sends meanwhile are held and answered after the delay, in the order they came.
 */
export const schema = Type.Object({ seconds: Type.Integer({ minimum: DELAY_SECONDS.min, maximum: DELAY_SECONDS.max }) })
export type Data = Static<typeof schema>

export const exits = () => UNNAMED_EXIT

export const holdsReplies = true

export const run = (node: NodeOf<typeof schema>, visit: Visit): Step => {
  visit.wait(0, { until: visit.now() + node.data.seconds * 1000 })
  return 'wait'
}

export const wake = (_node: NodeOf<typeof schema>, visit: Visit): Step => {
  visit.stopWaiting()
  return { exit: null }
}
