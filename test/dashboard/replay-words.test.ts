import { readFileSync } from 'node:fs'
import t from 'tap'
import { importWebModules } from '../helpers/web-modules.js'

// How the flow page says a replay's differing turn (web/src/dashboard/screens/flows/replay-words.ts),
// checked against the words the engine writes (src/engine/replays.ts): each reason the draft's side
// is missing and each kind of turn, in the person's words in both languages.

type Words = (key: string, params?: Record<string, string | number>) => string
interface Module {
  createI18n(dictionaries: { en: Record<string, string>; pt: Record<string, string> }): { translator(lang: 'en' | 'pt'): Words }
  en: Record<string, string>
  pt: Record<string, string>
  whyWords(why: string | undefined, t: Words, nodeName: (id: string) => string): string
  turnWords(session: { turn: number; trigger: string }, t: Words): string
}

const web = await importWebModules<Module>('web/src/shared/i18n.tsx', 'web/src/dashboard/strings/replays.ts', 'web/src/dashboard/screens/flows/replay-words.ts')
const { translator } = web.createI18n({ en: web.en, pt: web.pt })
const words = { en: translator('en'), pt: translator('pt') }
const engine = readFileSync(new URL('../../src/engine/replays.ts', import.meta.url), 'utf8')
/** A template literal's `${…}` as a value it could hold. */
const filled = (literal: string) => literal.replace(/\$\{[^}]*\}/g, 'lookup')

t.test("each reason the engine gives for a draft's missing side is said in words", async (t) => {
  const reasons = [...engine.matchAll(/['`](the draft [^'`]*)['`]/g)].map((match) => filled(match[1]!))
  t.ok(reasons.length >= 3, `the engine's reasons are found (${reasons.length})`)
  for (const reason of reasons) {
    for (const lang of ['en', 'pt'] as const) {
      const said = web.whyWords(reason, words[lang], (id) => `node ${id}`)
      t.not(said, reason, `${lang}: "${reason}" → "${said}"`)
      t.notMatch(said, /[{}]/, `${lang}: every placeholder is filled`)
    }
  }
  t.match(web.whyWords(reasons.find((reason) => reason.includes('calls outside')), words.en, (id) => `the node named ${id}`), /at the node named lookup\b/, 'a call names its node')
})

t.test('each kind of turn the engine writes is said in words', async (t) => {
  const kinds = [...engine.matchAll(/['`](\((?:start|timer|event [^)]*)\))['`]/g)].map((match) => filled(match[1]!))
  t.same(kinds.sort(), ['(event lookup)', '(start)', '(timer)'], "the engine's kinds of turn are found")
  t.same(
    kinds.map((trigger) => web.turnWords({ turn: trigger === '(start)' ? 0 : 2, trigger }, words.en)),
    ['Turn 2: the outside event lookup', 'At the start of the session', 'Turn 2: a timer fired'],
  )
  t.equal(web.turnWords({ turn: 1, trigger: 'my order 123' }, words.pt), 'Rodada 1: o contato enviou “my order 123”', "the contact's words are quoted")
})
