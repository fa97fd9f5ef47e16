import { existsSync } from 'node:fs'
import t from 'tap'
import { cliPath, runCli, tempDir } from '../helpers/cli.js'

// `flowd start --role`: how it is asked for. What the roles do as separate processes against one
// Postgres database (api, engine, two dispatchers, and a projector standing by for another that
// is then SIGKILLed) is proved by the deployment of test/roles/deployment.test.ts.

t.before(() => {
  if (!existsSync(cliPath)) throw new Error(`${cliPath} is missing: run 'npm run build' first`)
})

t.test('flowd start --role: usage', async (t) => {
  const help = await runCli(['start', '--help'], {})
  t.equal(help.code, 0, '--help exits 0')
  for (const role of ['all', 'api', 'projector', 'engine', 'dispatcher']) t.match(help.stdout, new RegExp(`^  ${role} `, 'm'), `--help describes the ${role} role`)

  const unknown = await runCli(['start', '--role', 'api,worker'], { DATA_DIR: tempDir(t) })
  t.equal(unknown.code, 2, 'an unknown role is a usage error (exit 2)')
  t.match(unknown.stderr, /unknown role 'worker'/, 'naming the role')

  const embedded = await runCli(['start', '--role', 'api'], { DATA_DIR: tempDir(t) })
  t.equal(embedded.code, 2, 'a single role on the embedded database is a usage error (exit 2)')
  t.match(embedded.stderr, /needs DATABASE_URL/, 'saying that it needs DATABASE_URL')
})
