import type { ConversationTestBody, TestRun } from '../api'
import type { Translate } from '../i18n'

// A conversation test as the editor reads and edits it (docs/testing-flows.md): its steps, what each
// turn must do, and a run's problems placed back on the test they came from.

export type Expectation = NonNullable<ConversationTestBody['start']>
export type ExpectedMessage = NonNullable<Expectation['messages']>[number]
export type TextMatch = NonNullable<ExpectedMessage['text']>
export type MatchKind = 'equals' | 'contains' | 'pattern'
export const MATCH_KINDS: MatchKind[] = ['equals', 'contains', 'pattern']
export type TestStep = ConversationTestBody['steps'][number]
export type TestResult = TestRun['tests'][number]
export type StepResult = TestResult['steps'][number]
export type Problem = StepResult['problems'][number]

export const matchKind = (match: TextMatch): MatchKind => ('equals' in match ? 'equals' : 'contains' in match ? 'contains' : 'pattern')
export const matchText = (match: TextMatch): string => ('equals' in match ? match.equals : 'contains' in match ? match.contains : match.pattern)
export const textMatch = (kind: MatchKind, text: string): TextMatch =>
  kind === 'equals' ? { equals: text } : kind === 'contains' ? { contains: text } : { pattern: text }

/** What turn `step` must do: 0 is the session's start, then the test's steps from 1. */
export const expectationOf = (test: ConversationTestBody, step: number): Expectation | undefined => (step === 0 ? test.start : test.steps[step - 1]?.expect)

/** The test with turn `step`'s expectation changed by `change`. */
export function withExpectation(test: ConversationTestBody, step: number, change: (expect: Expectation) => Expectation): ConversationTestBody {
  if (step === 0) return { ...test, start: change(test.start ?? {}) }
  return { ...test, steps: test.steps.map((s, i) => (i === step - 1 ? { ...s, expect: change(s.expect ?? {}) } : s)) }
}

/** The expectation with message `index`'s words checked by `text`, or not checked at all (undefined). */
export function withMessageText(expect: Expectation, index: number, text: TextMatch | undefined): Expectation {
  const messages = (expect.messages ?? []).map((message, i) => {
    if (i !== index) return message
    const { text: _old, ...rest } = message
    return text ? { ...rest, text } : rest
  })
  return { ...expect, messages }
}

/** What the person sent: a text's words, a tapped button's or row's title, a media's caption or address. */
function sentWords(send: Extract<TestStep, { send: unknown }>['send']): string {
  switch (send.type) {
    case 'text':
      return send.text.body
    case 'interactive':
      return send.interactive.type === 'button_reply' ? send.interactive.button_reply.title : send.interactive.list_reply.title
    default:
      return send.media.caption ?? send.media.url
  }
}

/** A step as a person reads it: "At the start", "Step 2: sends “Pro”". */
export function stepTitle(test: ConversationTestBody, step: number, t: Translate): string {
  if (step === 0) return t('tests.start')
  const found = test.steps[step - 1]
  if (found && 'send' in found) return t('tests.step.send', { n: step, text: sentWords(found.send) })
  if (found && 'event' in found) return t('tests.step.event', { n: step, name: found.event.name })
  return t('tests.step.timer', { n: step })
}

/** Where a problem is (the run's `at`: `messages[0].text`, `variables.plan`, `waitsAt`…), in words. */
export function placeOf(at: string, t: Translate): string {
  const message = /^messages\[(\d+)\]\.(text|type)$/.exec(at)
  if (message) return t(message[2] === 'text' ? 'tests.at.messageText' : 'tests.at.messageType', { n: Number(message[1]) + 1 })
  const variable = /^variables\.(.+)$/s.exec(at)
  if (variable) return t('tests.at.variable', { name: variable[1]! })
  const head = /^[a-zA-Z]+/.exec(at)?.[0]
  switch (head) {
    case 'messages':
    case 'transfer':
    case 'finish':
    case 'visits':
    case 'waitsAt':
    case 'status':
    case 'kanban':
      return t(`tests.at.${head}`)
    default:
      return at
  }
}

/**
 * What the test said at `at`, as it wrote it: a text check as its kind and words, the messages
 * expected as they are. Undefined where the path leads nowhere in the expectation (the run's own
 * `expected` is shown then).
 */
export function expectedAt(expect: Expectation | undefined, at: string): { found: true; value: unknown } | { found: false } {
  if (!expect) return { found: false }
  const variable = /^variables\.(.+)$/s.exec(at)
  if (variable) {
    const variables: Record<string, unknown> = expect.variables ?? {}
    return Object.hasOwn(variables, variable[1]!) ? { found: true, value: variables[variable[1]!] } : { found: false }
  }
  let value: unknown = expect
  for (const part of at.matchAll(/([A-Za-z]+)|\[(\d+)\]/g)) {
    if (typeof value !== 'object' || value === null) return { found: false }
    const key = part[1] ?? Number(part[2])
    if (!Object.hasOwn(value, key)) return { found: false }
    value = (value as Record<string | number, unknown>)[key]
  }
  return { found: true, value }
}

/** Why a test stopped before its last step (src/engine/conversation-tests.ts words it), in the person's words. */
export function stoppedText(stop: NonNullable<TestResult['stop']>, t: Translate): string {
  switch (stop.reason) {
    case 'ended':
      return t('tests.stopped.ended', { n: stop.step })
    case 'no_pending_timer':
      return t('tests.stopped.noTimer', { n: stop.step })
    default:
      return t('tests.stopped.noAnswer', { n: stop.step, node: stop.nodeId })
  }
}

const boundary = (char: string | undefined) => char === undefined || /[\s.,;:!?]/.test(char)

/**
 * Two texts split where they differ: what both start and end with, and the middles that differ,
 * widened to whole words, so a person sees the changed words at a glance.
 */
export function textDiff(expected: string, actual: string): { before: string; expected: string; actual: string; after: string } {
  const a = [...expected]
  const b = [...actual]
  let start = 0
  while (start < a.length && start < b.length && a[start] === b[start]) start++
  let end = 0
  while (end < a.length - start && end < b.length - start && a[a.length - 1 - end] === b[b.length - 1 - end]) end++
  while (start > 0 && !boundary(a[start - 1])) start--
  while (end > 0 && !boundary(a[a.length - end])) end--
  return {
    before: a.slice(0, start).join(''),
    expected: a.slice(start, a.length - end).join(''),
    actual: b.slice(start, b.length - end).join(''),
    after: a.slice(a.length - end).join(''),
  }
}
