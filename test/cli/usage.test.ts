import t from 'tap'
import { runCli } from '../helpers/cli.js'

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
  const commands = ['start', 'bootstrap', 'migrate', 'projections', 'processors', 'engine', 'api-keys', 'secrets', 'deliveries', 'audit', 'analytics', 'dev-receiver']
  const helps = await Promise.all(commands.map((command) => runCli([command, '--help'], {})))
  commands.forEach((command, i) => {
    t.equal(helps[i]!.code, 0, `${command} --help`)
    t.match(helps[i]!.stdout, /Usage:\s+flowd/)
  })
  // A command of actions run without one shows its usage and fails, so a script notices.
  const withActions = ['projections', 'processors', 'engine', 'api-keys', 'secrets', 'deliveries', 'audit', 'analytics']
  const bare = await Promise.all(withActions.map((command) => runCli([command], {})))
  withActions.forEach((command, i) => {
    t.equal(bare[i]!.code, 2, `${command} without an action`)
    t.match(bare[i]!.stdout, /Usage:\s+flowd/)
  })
  const unknownOption = await runCli(['deliveries', 'list', '--frobnicate'], {})
  t.equal(unknownOption.code, 2, 'an unknown option is a usage error')
})
