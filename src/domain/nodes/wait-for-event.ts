import { Type, type Static } from '@sinclair/typebox'
import { VariableName } from '../flow-definition.js'
import { checkTarget } from './checks.js'
import type { CheckContext, Exit, NodeOf, Step, Visit, Wake } from './node-type.js'

export const RECEIVED_HANDLE = 'received'
export const TIMEOUT_HANDLE = 'timeout'

/** A name an outside system gives the event it posts (`payment.confirmed`). */
export const EVENT_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$/
export const EventName = Type.String({ pattern: EVENT_NAME_PATTERN.source })

export const WAIT_SECONDS = { min: 5, max: 7 * 24 * 3600 } as const

/**
 * Waits for an outside event of a name (`POST /v1/sessions/{id}/events`) and leaves by `received`,
 * its data saved in `saveAs`, or by `timeout` once `timeoutSeconds` pass without it. An event the
 * session got before it waits is kept and taken at once. Messages the user sends meanwhile are
 * recorded and answered by nothing: the flow goes on when the event comes.
 */
export const schema = Type.Object({
  event: EventName,
  timeoutSeconds: Type.Integer({ minimum: WAIT_SECONDS.min, maximum: WAIT_SECONDS.max }),
  saveAs: Type.Optional(VariableName),
})
export type Data = Static<typeof schema>

export const exits = (): readonly Exit[] => [
  { id: RECEIVED_HANDLE, label: RECEIVED_HANDLE, kind: 'default' },
  { id: TIMEOUT_HANDLE, label: TIMEOUT_HANDLE, kind: 'timeout' },
]

export const writes = (data: Readonly<Record<string, unknown>>) => (typeof data.saveAs === 'string' ? data.saveAs : undefined)

export const check = (data: Data, context: CheckContext): void => {
  if (data.saveAs !== undefined) checkTarget(data.saveAs, 'object', "an event's data is an object", ['saveAs'], context)
}

export const run = ({ data }: NodeOf<typeof schema>, visit: Visit): Step => {
  const kept = visit.takeEvent(data.event)
  if (kept) return received(data, kept.data, visit)
  visit.waitForEvent(data.event, data.timeoutSeconds)
  return 'wait'
}

export const wake = ({ data }: NodeOf<typeof schema>, visit: Visit, wake: Wake): Step => {
  visit.stopWaiting()
  return wake.type === 'event' ? received(data, wake.data, visit) : { exit: TIMEOUT_HANDLE, finishReason: 'timeout' }
}

const received = (data: Data, eventData: Record<string, unknown>, visit: Visit): Step => {
  if (data.saveAs !== undefined) visit.assign(data.saveAs, eventData)
  return { exit: RECEIVED_HANDLE }
}
