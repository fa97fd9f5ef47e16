import t from 'tap'
import { runCli, runCliInOneProcess } from '../helpers/cli.js'

t.test('configuration errors: one line per bad value, exit code 2', async (t) => {
  const result = await runCli(['start'], { PORT: 'eighty', LOG_LEVEL: 'loud', EVENT_STORE: 'esdb', WEBHOOK_ALLOWED_PRIVATE_CIDRS: '10.0.0.0/8,nonsense', WEBHOOK_RETRY_SCHEDULE: '0,-5' })
  t.equal(result.code, 2)
  for (const name of ['PORT=eighty', 'LOG_LEVEL=loud', 'EVENTSTORE_CONNECTION_STRING: required', 'DATABASE_URL: required', 'nonsense is not a CIDR', 'WEBHOOK_RETRY_SCHEDULE=0,-5']) {
    t.match(result.stderr, name)
  }
  t.equal(result.stderr.trim().split('\n').length, 7, 'a heading and one line for each of the six problems')
})

t.test('help and unknown commands', async (t) => {
  const help = await runCli(['--help'], {})
  t.equal(help.code, 0)
  t.match(help.stdout, /Commands:/)
  const unknown = await runCli(['frobnicate'], {})
  t.equal(unknown.code, 2)
  t.match(unknown.stderr, /unknown command 'frobnicate'/)
  const unknownOption = await runCli(['deliveries', 'list', '--frobnicate'], {})
  t.equal(unknownOption.code, 2, 'an unknown option is a usage error')

  // Each command's help, and each command of actions run without one: in one process, as none of
  // them opens a store (they are given one nothing listens on, which would fail them with 1).
  const env = { DATABASE_URL: 'postgres://flowd@127.0.0.1:1/unreachable' }
  const commands = ['start', 'bootstrap', 'migrate', 'projections', 'processors', 'engine', 'api-keys', 'secrets', 'deliveries', 'audit', 'analytics', 'dev-receiver', 'flows']
  const withActions = ['projections', 'processors', 'engine', 'api-keys', 'secrets', 'deliveries', 'audit', 'analytics', 'flows']
  const withExitCodes = ['projections', 'processors', 'engine', 'api-keys', 'secrets', 'deliveries', 'dev-receiver', 'flows']
  const results = await runCliInOneProcess([...commands.map((command) => ({ args: [command, '--help'], env })), ...withActions.map((command) => ({ args: [command], env }))])
  const helps = results.slice(0, commands.length)
  const bare = results.slice(commands.length)
  commands.forEach((command, i) => {
    t.equal(helps[i]!.code, 0, `${command} --help`)
    t.match(helps[i]!.stdout, /Usage:\s+flowd/)
    if (withExitCodes.includes(command)) t.match(helps[i]!.stdout, /Exit codes/, `${command} --help lists its exit codes`)
  })
  t.match(helps[commands.indexOf('secrets')]!.stdout, /flowd secrets rewrap/, 'secrets --help names its action')
  // A command of actions run without one shows its usage and fails, so a script notices.
  withActions.forEach((command, i) => {
    t.equal(bare[i]!.code, 2, `${command} without an action`)
    t.match(bare[i]!.stdout, /Usage:\s+flowd/)
  })
})
