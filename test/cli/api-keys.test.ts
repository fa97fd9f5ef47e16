import t from 'tap'
import { cliStore, runCli, runCliInOneProcess } from '../helpers/cli.js'

const json = (result: { code: number | null; stdout: string; stderr: string }) => {
  if (result.code !== 0) throw new Error(`exit ${result.code}: ${result.stderr}`)
  return JSON.parse(result.stdout)
}

t.test('api-keys create, list and revoke as the operator, across organizations', async (t) => {
  const { env: storeEnv } = await cliStore(t)
  const env = { ...storeEnv, WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32' }
  const cli = (...args: string[]) => runCli(args, env)
  const unknownId = '00000000-0000-4000-8000-000000000000'

  const admin = json(await cli('bootstrap', '--organization', 'Acme', '--workspace', 'Support', '--json'))
  const other = json(await cli('bootstrap', '--organization', 'Other', '--workspace', 'Elsewhere', '--json'))

  const callbackUrl = 'https://127.0.0.1:8443/webhooks'
  const bot = json(await cli('api-keys', 'create', '--workspace', admin.workspaceId, '--name', 'bot', '--callback-url', callbackUrl, '--json'))
  t.match(bot, { name: 'bot', workspaceId: admin.workspaceId, role: 'workspace', callbackUrl, apiKey: /^wh_[A-Za-z0-9_-]{43}$/, signingSecret: /^whsec_/ })
  t.same(Object.keys(bot).sort(), ['apiKey', 'callbackUrl', 'createdAt', 'id', 'keyPrefix', 'name', 'role', 'signingSecret', 'workspaceId'], 'the shape of POST /v1/api-keys')

  const everyKey = json(await cli('api-keys', 'list', '--json'))
  t.same(everyKey.map((k: { id: string }) => k.id), [admin.apiKeyId, other.apiKeyId, bot.id], 'the operator sees the keys of every organization, oldest first')
  t.notMatch(JSON.stringify(everyKey), /whsec_|wh_[A-Za-z0-9_-]{43}/, 'never a key or secret in a list')

  const unknownWorkspace = await cli('api-keys', 'create', '--workspace', unknownId)
  t.equal(unknownWorkspace.code, 3, 'an unknown workspace is exit code 3')
  t.match(unknownWorkspace.stderr, `workspace ${unknownId} not found`)

  t.same(json(await cli('api-keys', 'revoke', bot.id, '--json')), { id: bot.id, revoked: true })
  const revokedAgain = await cli('api-keys', 'revoke', bot.id)
  t.equal(revokedAgain.code, 3, 'a revoked key is no longer found')
  t.match(revokedAgain.stderr, `API key ${bot.id} not found`)
  const oneOrganization = json(await cli('api-keys', 'list', '--organization', admin.organizationId, '--json'))
  t.same(oneOrganization.map((k: { id: string }) => k.id), [admin.apiKeyId], 'one organization, without the revoked key')
})

t.test('usage errors exit 2 before touching the database; --help exits 0', async (t) => {
  // A database nothing listens on: a command that opened it would fail with 1, not 2. None does,
  // so they run in one process (test/helpers/cli.ts).
  const env = { DATABASE_URL: 'postgres://flowd@127.0.0.1:1/unreachable' }
  const cases: [string[], RegExp][] = [
    [['api-keys', 'create'], /--workspace is required/],
    [['api-keys', 'list', '--bogus'], /Unknown option '--bogus'/],
    [['api-keys', 'revoke', 'not-an-id'], /must be a UUID/],
    [['deliveries', 'list', '--status', 'lost'], /--status must be one of/],
    [['deliveries', 'list', '--limit', '0'], /--limit must be a whole number/],
    [['deliveries', 'list', '--state', 'failing'], /deliveries list takes no --state/],
    [['dev-receiver', '--secret', 'hunter2'], /--secret: webhook secret must look like whsec_/],
  ]
  // The help of an action; each command's own help, and its exit codes, are test/cli/usage.test.ts's.
  const actionHelpArgs = ['api-keys', 'create', '--help']
  const results = await runCliInOneProcess([...cases.map(([args]) => ({ args, env })), { args: actionHelpArgs, env }])
  cases.forEach(([args, message], i) => {
    t.equal(results[i]!.code, 2, args.join(' '))
    t.match(results[i]!.stderr, message)
  })
  const actionHelp = results[cases.length]!
  t.equal(actionHelp.code, 0, actionHelpArgs.join(' '))
  t.match(actionHelp.stdout, /Usage:\s+flowd/)
  t.match(actionHelp.stdout, /Exit codes/)
  const bare = await runCli([], env)
  t.equal(bare.code, 2, 'flowd alone prints its help and exits 2')
  t.match(bare.stdout, /Exit codes \(every command\):\n  0  success\n  1 .*\n  2 .*\n  3  not found.*\n  4  refused/)
})
