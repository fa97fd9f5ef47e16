import { Type, type Static } from '@sinclair/typebox'
import { NO_EXITS, type Step } from './node-type.js'

/** Ends the flow: the session finishes (`function: finish`), or a sub-flow returns to the flow that ran it. */
export const schema = Type.Object({})
export type Data = Static<typeof schema>

export const exits = () => NO_EXITS

export const run = (): Step => 'end'
