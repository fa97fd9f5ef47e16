import type { Translate } from '../../i18n'
import { sessionStateKey } from '../sessions/session-state'
import type { DifferingSession } from './api-types'

// A replay's report in words. The engine (src/engine/replays.ts) writes a differing turn's
// `trigger` as `(start)`, `(event NAME)`, `(timer)` or the contact's words, and `why` as a sentence;
// here they become the person's language. Words no rule knows are shown as the engine wrote them.

/** The turn a session first differs at: its start, or what it answered. */
export function turnWords(session: DifferingSession, t: Translate): string {
  const { turn, trigger } = session
  if (turn === 0) return t('replays.turn.start')
  if (trigger === '(timer)') return t('replays.turn.timer', { turn })
  const event = /^\(event (.+)\)$/s.exec(trigger)
  if (event) return t('replays.turn.event', { turn, name: event[1]! })
  return t('replays.turn.message', { turn, text: trigger })
}

/** Why the draft's side of a turn is missing; `nodeName` names the node a call would be made at. */
export function whyWords(why: string | undefined, t: Translate, nodeName: (id: string) => string): string {
  const calls = /^the draft calls outside at (.+?), which the session never did/s.exec(why ?? '')
  if (calls) return t('replays.why.calls', { node: nodeName(calls[1]!) })
  if (why === 'the draft fails the turn') return t('replays.why.fails')
  if (why === undefined || why === 'the draft answers nothing') return t('replays.why.silent')
  return why
}

const STATES = ['active', 'running', 'completed', 'timeout', 'error'] as const
type State = (typeof STATES)[number]
const isState = (status: string): status is State => (STATES as readonly string[]).includes(status)

/** The state a turn leaves its session in, in the words the session screens use. */
export const turnStateWords = (status: string, t: Translate): string => (isState(status) ? t(sessionStateKey(status)) : status)

/** What a turn asked for besides its messages (a transfer, a finish), in words. */
export function functionsWords(functions: readonly string[], t: Translate): string {
  if (functions.length === 0) return t('replays.function.none')
  return functions.map((name) => (name === 'transfer' ? t('replays.function.transfer') : name === 'finish' ? t('replays.function.finish') : name)).join(', ')
}
