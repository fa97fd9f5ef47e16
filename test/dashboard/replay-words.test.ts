import t from 'tap'
import { Value } from '@sinclair/typebox/value'
import { MissingTurn, TurnTrigger } from '../../src/domain/replay.js'
import { importWebModules } from '../helpers/web-modules.js'

// How the flow page says a replay's differing turn (web/src/dashboard/screens/flows/replay-words.ts):
// each kind of turn and each reason the draft's side is missing, as the API's schema allows them,
// in the person's words in both languages.

type Words = (key: string, params?: Record<string, string | number>) => string
interface Module {
  createI18n(dictionaries: { en: Record<string, string>; pt: Record<string, string> }): { translator(lang: 'en' | 'pt'): Words }
  en: Record<string, string>
  pt: Record<string, string>
  missingWords(missing: MissingTurn | undefined, t: Words, nodeName: (id: string) => string): string
  turnWords(session: { turn: number; trigger: TurnTrigger }, t: Words): string
}

const web = await importWebModules<Module>('web/src/shared/i18n.tsx', 'web/src/dashboard/strings/replays.ts', 'web/src/dashboard/screens/flows/replay-words.ts')
const { translator } = web.createI18n({ en: web.en, pt: web.pt })
const words = { en: translator('en'), pt: translator('pt') }

t.test("each reason the draft's side is missing is said in words", async (t) => {
  const reasons: MissingTurn[] = [{ reason: 'calls_outside', nodeId: 'lookup' }, { reason: 'fails' }, { reason: 'answers_nothing' }]
  t.same(reasons.map((missing) => missing.reason).sort(), MissingTurn.anyOf.map((schema) => schema.properties.reason.const).sort(), 'every reason the schema has')
  for (const missing of reasons) {
    t.ok(Value.Check(MissingTurn, missing))
    for (const lang of ['en', 'pt'] as const) {
      const said = web.missingWords(missing, words[lang], (id) => `node ${id}`)
      t.notMatch(said, /[{}]|replays\./, `${lang}: ${missing.reason} → "${said}"`)
    }
  }
  t.match(web.missingWords(reasons[0], words.en, (id) => `the node named ${id}`), /at the node named lookup\b/, 'a call names its node')
  t.not(web.missingWords({ reason: 'fails' }, words.en, String), web.missingWords({ reason: 'answers_nothing' }, words.en, String), 'each reason in words of its own')
})

t.test('each kind of turn is said in words', async (t) => {
  const triggers: TurnTrigger[] = [{ kind: 'start' }, { kind: 'message', text: '(timer)' }, { kind: 'event', name: 'paid' }, { kind: 'timer' }]
  t.same(triggers.map((trigger) => trigger.kind).sort(), TurnTrigger.anyOf.map((schema) => schema.properties.kind.const).sort(), 'every kind the schema has')
  t.same(
    triggers.map((trigger) => web.turnWords({ turn: trigger.kind === 'start' ? 0 : 2, trigger }, words.en)),
    ['At the start of the session', 'Turn 2: the contact sent “(timer)”', 'Turn 2: the outside event paid', 'Turn 2: a timer fired'],
    "a contact's words are quoted, even words that look like a kind of turn",
  )
  t.equal(web.turnWords({ turn: 1, trigger: { kind: 'message', text: 'my order 123' } }, words.pt), 'Rodada 1: o contato enviou “my order 123”')
})
