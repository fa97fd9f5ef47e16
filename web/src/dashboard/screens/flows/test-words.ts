import type { Translate } from '../../i18n'
import type { TestBody, TestProblem, TestResult, TestStep, TextMatch } from './api-types'
import { expectationAt } from './test-draft'

/** What the contact or the world does on a step, in a line. */
export function stepWords(step: TestStep, t: Translate): string {
  if ('event' in step) return t('flowTests.send.event', { name: step.event.name })
  if ('timer' in step) return t('flowTests.send.timer')
  const { send } = step
  switch (send.type) {
    case 'text':
      return `${t('flowTests.send.text')} “${send.text.body}”`
    case 'interactive': {
      const choice = send.interactive.type === 'button_reply' ? send.interactive.button_reply : send.interactive.list_reply
      return t('flowTests.send.choice', { title: choice.title, id: choice.id })
    }
    default:
      return t('flowTests.send.media', { kind: t(`sessions.send.kind.${send.type}`) })
  }
}

/** A turn's name: the session's start, or step n. */
export const turnName = (turn: number, t: Translate): string => (turn === 0 ? t('flowTests.turn.start') : t('flowTests.turn.step', { n: turn }))

/** A turn's name with what happened on it: "Step 1: The contact sends “hi”". */
export function turnWords(test: TestBody | undefined, turn: number, t: Translate): string {
  const step = turn === 0 ? undefined : test?.steps[turn - 1]
  return step ? t('flowTests.stepCaption', { turn: turnName(turn, t), what: stepWords(step, t) }) : turnName(turn, t)
}

/** What a text check expects, in words: exactly "…", a text containing "…", a text like "…". */
export function matchWords(match: TextMatch, t: Translate): string {
  if ('equals' in match) return t('flowTests.expected.equals', { text: match.equals })
  if ('contains' in match) return t('flowTests.expected.contains', { text: match.contains })
  return t('flowTests.expected.pattern', { text: match.pattern })
}

const MESSAGE_TEXT = /^messages\[(\d+)\]\.text$/

/**
 * What a problem of a run expected, in the person's words where the test that ran says it (a
 * message's words, the number of messages), else as its value.
 */
export function expectedWords(test: TestBody | undefined, turn: number, problem: TestProblem, t: Translate): string {
  const expect = test && expectationAt(test, turn)
  const message = MESSAGE_TEXT.exec(problem.at)
  const match = message ? expect?.messages?.[Number(message[1])]?.text : undefined
  if (match) return matchWords(match, t)
  if (problem.at === 'messages' && expect?.messages) return t('flowTests.expected.messages', { count: expect.messages.length })
  return valueWords(problem.expected, t)
}

/** What came instead: a message's words quoted, as the expectation beside them quotes its own. */
export const actualWords = (problem: TestProblem, t: Translate): string =>
  MESSAGE_TEXT.test(problem.at) && typeof problem.actual === 'string' ? `“${problem.actual}”` : valueWords(problem.actual, t)

/** A value a run compares, as text: a text as itself, nothing as such, anything else as JSON (a variable's `1` and `"1"` differ). */
function valueWords(value: unknown, t: Translate): string {
  if (value === null || value === undefined) return t('flowTests.value.none')
  if (typeof value === 'string') return value
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value.map((item) => `“${item}”`).join(', ')
  return JSON.stringify(value)
}

/** Why a test stopped before its last step, in the person's words. */
export function stopWords(stop: NonNullable<TestResult['stop']>, t: Translate): string {
  const why = stop.reason === 'ended' ? t('flowTests.stopped.ended') : stop.reason === 'no_pending_timer' ? t('flowTests.stopped.noTimer') : t('flowTests.stopped.noAnswer', { node: stop.nodeId })
  return t('flowTests.stopped', { step: stop.step, why })
}
