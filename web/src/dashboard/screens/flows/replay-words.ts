import type { Translate } from '../../i18n'
import { sessionStateKey } from '../sessions/session-state'
import type { DifferingSession } from './api-types'

// A replay's report in words: a differing turn's `trigger` (what it answered) and, when the draft's
// side is missing, its `missing` reason, in the person's language.

/** The turn a session first differs at: its start, or what it answered. */
export function turnWords(session: Pick<DifferingSession, 'turn' | 'trigger'>, t: Translate): string {
  const { turn, trigger } = session
  switch (trigger.kind) {
    case 'start':
      return t('replays.turn.start')
    case 'timer':
      return t('replays.turn.timer', { turn })
    case 'event':
      return t('replays.turn.event', { turn, name: trigger.name })
    default:
      return t('replays.turn.message', { turn, text: trigger.text })
  }
}

/** Why the draft's side of a turn is missing; `nodeName` names the node a call would be made at. */
export function missingWords(missing: DifferingSession['missing'], t: Translate, nodeName: (id: string) => string): string {
  if (missing?.reason === 'calls_outside') return t('replays.why.calls', { node: nodeName(missing.nodeId) })
  if (missing?.reason === 'fails') return t('replays.why.fails')
  return t('replays.why.silent')
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
