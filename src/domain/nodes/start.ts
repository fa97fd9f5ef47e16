import { Type, type Static } from '@sinclair/typebox'
import { UNNAMED_EXIT, type Step } from './node-type.js'

/** The entry point; a flow has exactly one. */
export const schema = Type.Object({})
export type Data = Static<typeof schema>

export const exits = () => UNNAMED_EXIT

export const run = (): Step => ({ exit: null })
