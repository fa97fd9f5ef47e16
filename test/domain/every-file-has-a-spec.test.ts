import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { examples } from '../helpers/decider-spec.js'

// Every module of src/domain has its spec at the same path under test/domain, and every spec there
// is written with the decider test kit.

const root = fileURLToPath(new URL('../../', import.meta.url))
const filesUnder = (folder: string, suffix: string) =>
  readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })
    .map((entry) => entry.split('\\').join('/'))
    .filter((entry) => entry.endsWith(suffix))
    .sort()

/** The spec path a module of src/domain must have, relative to test/domain. */
function specOf(module: string): string {
  return module.replace(/\.ts$/, '.test.ts')
}

/** Whether a spec at this path under test/domain imports the kit, by the specifier its depth needs. */
function importsKit(spec: string, source: string): boolean {
  const kit = `${'../'.repeat(spec.split('/').length)}helpers/decider-spec.js`
  return source.includes(`from '${kit}'`)
}

t.test('every file under src/domain has its spec under test/domain', async (t) => {
  const modules = filesUnder('src/domain', '.ts')
  t.ok(modules.includes('session.ts') && modules.includes('nodes/question.ts'), `${modules.length} modules, nested folders included`)
  const missing = modules.filter((module) => !existsSync(join(root, 'test/domain', specOf(module))))
  t.same(missing, [], 'these modules of src/domain have no test/domain/<path>.test.ts')
})

t.test('every spec under test/domain imports the decider test kit', async (t) => {
  const specs = filesUnder('test/domain', '.test.ts')
  const without = specs.filter((spec) => !importsKit(spec, readFileSync(join(root, 'test/domain', spec), 'utf8')))
  t.same(without, [], 'these specs do not import ../helpers/decider-spec.js (../../helpers/… one folder down)')
})

t.test('the paths it checks', async (t) => {
  examples(t, specOf, [
    ['a module', ['session.ts'], 'session.test.ts'],
    ['a node module', ['nodes/set-variable.ts'], 'nodes/set-variable.test.ts'],
  ])
  const kit = "import { spec } from '../helpers/decider-spec.js'"
  examples(t, importsKit, [
    ['a spec of test/domain', ['session.test.ts', kit], true],
    ['a spec one folder down needs ../../', ['nodes/end.test.ts', kit], false],
    ['which it has', ['nodes/end.test.ts', kit.replace('../', '../../')], true],
    ['a kit named in a comment only', ['json.test.ts', '// see ../helpers/decider-spec.js'], false],
  ])
})
