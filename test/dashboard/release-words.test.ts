import t from 'tap'
import { importWebModules } from '../helpers/web-modules.js'

// How the flow page says a change of its release (web/src/dashboard/screens/flows/release-words.ts):
// every reason the API gives, with and without the change before it, in both languages.

type Words = (key: string, params?: Record<string, string | number>) => string
interface Change {
  changedAt: string
  reason: 'publish' | 'rollback' | 'release' | 'promote' | 'halt'
  published: number | null
  liveVersion: number
  gradual: { version: number; percent: number } | null
}
interface Module {
  createI18n(dictionaries: { en: Record<string, string>; pt: Record<string, string> }): { translator(lang: 'en' | 'pt'): Words }
  en: Record<string, string>
  pt: Record<string, string>
  releaseChangeWords(change: Change, before: Change | undefined, t: Words): string
}

const web = await importWebModules<Module>('web/src/shared/i18n.tsx', 'web/src/dashboard/strings/releases.ts', 'web/src/dashboard/screens/flows/release-words.ts')
const { translator } = web.createI18n({ en: web.en, pt: web.pt })
const words = { en: translator('en'), pt: translator('pt') }
const change = (reason: Change['reason'], liveVersion: number, gradual: Change['gradual'] = null, published: number | null = null): Change => ({ changedAt: '2026-11-30T10:00:00.000Z', reason, published, liveVersion, gradual })

t.test('each change of a release is said in a sentence', async (t) => {
  const split = change('release', 1, { version: 2, percent: 20 })
  const cases: [Change, Change | undefined, string, string][] = [
    [change('publish', 2, null, 2), change('publish', 1, null, 1), 'Version 2 published', 'Versão 2 publicada'],
    [change('publish', 1, { version: 3, percent: 20 }, 3), split, 'Version 3 published for 20% of new sessions; version 1 takes the rest', 'Versão 3 publicada para 20% das sessões novas; a versão 1 recebe o resto'],
    [change('publish', 3), change('rollback', 1), 'Version 3 published again for every new session', 'Versão 3 publicada de novo para todas as sessões novas'],
    [change('publish', 1, { version: 3, percent: 5 }), change('rollback', 1), 'Version 3 published again for 5% of new sessions; version 1 takes the rest', 'Versão 3 publicada de novo para 5% das sessões novas; a versão 1 recebe o resto'],
    [change('rollback', 1), change('publish', 2, null, 2), 'Rolled back to version 1', 'Volta à versão 1'],
    [change('rollback', 3), change('rollback', 1), 'Version 3 made live', 'Versão 3 colocada no ar'],
    [split, change('rollback', 1), 'Version 2 given 20% of new sessions; version 1 takes the rest', 'Versão 2 passou a receber 20% das sessões novas; a versão 1 recebe o resto'],
    [change('promote', 2), split, 'Version 2 promoted to all new sessions', 'Versão 2 promovida a todas as sessões novas'],
    [change('halt', 1), split, 'Gradual release of version 2 ended; version 1 takes every new session', 'Liberação gradual da versão 2 encerrada; a versão 1 recebe todas as sessões novas'],
    [change('halt', 1), undefined, 'Gradual release ended; version 1 takes every new session', 'Liberação gradual encerrada; a versão 1 recebe todas as sessões novas'],
  ]
  for (const [now, before, en, pt] of cases) {
    t.equal(web.releaseChangeWords(now, before, words.en), en)
    t.equal(web.releaseChangeWords(now, before, words.pt), pt)
  }
  t.same([...new Set(cases.map(([now]) => now.reason))].sort(), ['halt', 'promote', 'publish', 'release', 'rollback'], 'every reason the API gives')
})
