import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const loader = fileURLToPath(new URL('../loader/resolve-ts.mjs', import.meta.url))
const storageHelper = new URL('../helpers/storage.ts', import.meta.url).href

/** Imports the storage helper in a process of its own, with `env` for the database settings, and prints the backends it finds. */
function backendsWith(env: Record<string, string>) {
  const { DATABASE_URL: _url, REQUIRE_POSTGRES: _required, ...rest } = process.env
  const script = `const { reachableBackends } = await import(${JSON.stringify(storageHelper)}); console.log(reachableBackends.map((b) => b.name).join(' '))`
  const child = spawnSync(process.execPath, [`--import=${loader}`, '--input-type=module', '--eval', script], { env: { ...rest, ...env }, encoding: 'utf8' })
  return { status: child.status, stdout: child.stdout.trim(), stderr: child.stderr }
}

t.test('without DATABASE_URL the tests run on PGlite alone', async (t) => {
  t.same(backendsWith({}), { status: 0, stdout: 'pglite', stderr: '' })
})

t.test('with REQUIRE_POSTGRES=1 a missing DATABASE_URL fails the test file instead of leaving Postgres out', async (t) => {
  const run = backendsWith({ REQUIRE_POSTGRES: '1' })
  t.not(run.status, 0, 'the import fails')
  t.equal(run.stdout, '', 'no backend is listed')
  t.match(run.stderr, 'REQUIRE_POSTGRES=1 but DATABASE_URL is not set: the tests would leave out every Postgres variant', 'saying why')
})

t.test('with REQUIRE_POSTGRES=1 and DATABASE_URL both backends run', async (t) => {
  t.same(backendsWith({ REQUIRE_POSTGRES: '1', DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test' }), { status: 0, stdout: 'pglite postgres', stderr: '' })
})
