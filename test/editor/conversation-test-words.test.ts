import t from 'tap'
import type { FlowDefinition } from '../../src/domain/flow-definition.js'
import { runConversationTest, type TestStop } from '../../src/engine/conversation-tests.js'
import { toRunnable } from '../../src/engine/flow-versions.js'
import type { RunnableFlow } from '../../src/engine/interpreter.js'
import { orderLookup } from '../fixtures/order-lookup.js'
import { echoFlow } from '../helpers/flows.js'
import { importWebModules } from '../helpers/web-modules.js'

// How the editor's Tests tab says what a run found (web/src/editor/conversation-tests/expectations.ts),
// checked against what the engine's runs write: every place a problem can be at, and every reason a
// test stops early, in words in both languages; and the words two texts differ by.

type Words = (key: string, params?: Record<string, string | number>) => string
interface Module {
  createI18n(dictionaries: { en: Record<string, string>; pt: Record<string, string> }): { translator(lang: 'en' | 'pt'): Words }
  conversationTestsEn: Record<string, string>
  conversationTestsPt: Record<string, string>
  placeOf(at: string, t: Words): string
  expectedAt(expect: object | undefined, at: string): { found: boolean; value?: unknown }
  stoppedText(stop: TestStop, t: Words): string
  textDiff(expected: string, actual: string): { before: string; expected: string; actual: string; after: string }
}

const web = await importWebModules<Module>('web/src/shared/i18n.tsx', 'web/src/editor/conversation-tests-strings.ts', 'web/src/editor/conversation-tests/expectations.ts')
const { translator } = web.createI18n({ en: web.conversationTestsEn, pt: web.conversationTestsPt })
const en = translator('en')
const pt = translator('pt')

const runnable = (definition: object): RunnableFlow => {
  const flow = toRunnable(definition as FlowDefinition)
  if (typeof flow === 'string') throw new Error(flow)
  return flow
}
const inputs = { timeZone: 'UTC' }
const text = (body: string) => ({ type: 'text' as const, text: { body } })

t.test('every place a run finds a difference at is said in words, and found in the test that ran', async (t) => {
  // One turn expected to do all it does not: each check of an expectation fails once.
  const expect = {
    messages: [{ type: 'media' as const, text: { equals: 'You said hello' } }, { text: { contains: 'nothing' } }, {}],
    transfer: { targetType: 'sector' as const },
    finish: true as const,
    variables: { said: 'hello' },
    visits: 'end',
    waitsAt: 'end',
    status: 'completed' as const,
    kanban: [{ action: 'create' as const }],
  }
  const result = runConversationTest(runnable(echoFlow), { name: 'all wrong', steps: [{ send: text('hi'), expect }] }, inputs)
  const places = result.steps[1]!.problems.map((problem) => problem.at)
  t.same(
    [...places].sort(),
    ['finish', 'kanban', 'messages', 'messages[0].text', 'messages[0].type', 'messages[1].text', 'status', 'transfer', 'variables.said', 'visits', 'waitsAt'],
    'the run found every difference',
  )
  for (const at of places) {
    const said = { en: web.placeOf(at, en), pt: web.placeOf(at, pt) }
    t.ok(said.en !== at && said.pt !== at && said.en !== said.pt, `${at} → "${said.en}" / "${said.pt}"`)
    t.ok(web.expectedAt(expect, at).found, `${at}: the check is read from the test as written`)
  }
  t.same(web.expectedAt(expect, 'messages[0].text'), { found: true, value: { equals: 'You said hello' } })
  t.same(web.expectedAt(expect, 'variables.said'), { found: true, value: 'hello' })
  t.same(web.expectedAt(expect, 'messages[7].text'), { found: false }, 'a place the test does not hold is not made up')
})

t.test('every reason a test stops early is said in words, with its step', async (t) => {
  const ended = runConversationTest(runnable(echoFlow), { name: 'too long', steps: [{ send: text('bye') }, { send: text('anyone?') }] }, inputs)
  const noTimer = runConversationTest(runnable(echoFlow), { name: 'timer', steps: [{ timer: true }] }, inputs)
  const unanswered = runConversationTest(runnable(orderLookup('https://shop.example.com')), { name: 'no answer', steps: [{ send: text('1') }] }, inputs)
  const stops = [ended.stop, noTimer.stop, unanswered.stop]
  t.same(stops.map((stop) => stop?.reason), ['ended', 'no_pending_timer', 'unanswered_call'], 'each run stopped early, each for its reason')
  for (const stop of stops as TestStop[]) {
    const said = { en: web.stoppedText(stop, en), pt: web.stoppedText(stop, pt) }
    t.notMatch(`${said.en} ${said.pt}`, /[{}]|tests\./, `${stop.reason}: "${said.en}" / "${said.pt}"`)
    t.ok(said.en.includes(`step ${stop.step}`) && said.pt.includes(`passo ${stop.step}`), 'the step is named')
  }
  t.match(web.stoppedText(unanswered.stop!, en), /node lookup calls outside/, 'the node without an answer is named')
})

t.test('two texts are split where they differ, in whole words', async (t) => {
  t.same(web.textDiff('Thanks Bia: plan pro.', 'Thank you Bia: plan pro.'), { before: '', expected: 'Thanks', actual: 'Thank you', after: ' Bia: plan pro.' })
  t.same(web.textDiff('Your order is shipped', 'Your order is late'), { before: 'Your order is ', expected: 'shipped', actual: 'late', after: '' })
  t.same(web.textDiff('Hi Ana!', 'Hi Ana!'), { before: 'Hi Ana!', expected: '', actual: '', after: '' }, 'the same text differs nowhere')
  t.same(web.textDiff('', 'Hello'), { before: '', expected: '', actual: 'Hello', after: '' })
  t.same(web.textDiff('plan 😀 pro', 'plan 😃 pro'), { before: 'plan ', expected: '😀', actual: '😃', after: ' pro' }, 'an emoji is one character, not two halves')
})
