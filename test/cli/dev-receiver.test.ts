import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { request } from 'node:https'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { signWebhook } from '../../src/webhooks/signature.js'
import { assertionMessage } from '../helpers/assertion-message.js'
import { childEnv, cliPath, cliStore, freePort, runCli, startService } from '../helpers/cli.js'
import { echoFlow } from '../helpers/flows.js'
import { eventually } from '../helpers/wait.js'

/** `flowd dev-receiver` as a child process; resolves once it is listening. */
async function startDevReceiver(t: Test, args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [cliPath, 'dev-receiver', ...args], { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => (stdout += chunk))
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  await eventually(`dev-receiver to listen\n${stderr}`, () => (stdout.includes('Waiting for webhooks') ? true : child.exitCode !== null ? Promise.reject(new Error(stderr)) : undefined), 30_000)
  return {
    output: () => stdout,
    stop: async () => {
      child.kill('SIGTERM')
      return exited
    },
  }
}

/** POSTs a webhook to the receiver over HTTPS, trusting its certificate; answers the status. */
function postWebhook(url: string, caFile: string, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', ca: readFileSync(caFile), headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
    req.on('error', reject)
    req.end(body)
  })
}

const json = (result: { code: number | null; stdout: string; stderr: string }) => {
  if (result.code !== 0) throw new Error(`exit ${result.code}: ${result.stderr}`)
  return JSON.parse(result.stdout)
}

t.test('a real webhook at the dev receiver, verified; a forged one not; deliveries list and retry', async (t) => {
  // The services stop before each command: on the embedded store (without DATABASE_URL) a command and a service cannot share it.
  const { env: storeEnv } = await cliStore(t)
  const dataDir = storeEnv.DATA_DIR
  const env = { ...storeEnv, WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32' }
  const cli = (...args: string[]) => runCli(args, env)
  const unknownId = '00000000-0000-4000-8000-000000000000'

  const admin = json(await cli('bootstrap', '--organization', 'Acme', '--workspace', 'Support', '--json'))

  const port = await freePort()
  const callbackUrl = `https://127.0.0.1:${port}/webhooks`
  const bot = json(await cli('api-keys', 'create', '--workspace', admin.workspaceId, '--name', 'bot', '--callback-url', callbackUrl, '--json'))

  // The receiver, then the service trusting its certificate; the bot's session sends a real webhook.
  const receiver = await startDevReceiver(t, ['--port', String(port), '--secret', bot.signingSecret], env)
  const certFile = join(dataDir, 'dev-receiver', 'cert.pem')
  t.match(receiver.output(), `WEBHOOK_ALLOWED_PRIVATE_CIDRS=127.0.0.1/32 WEBHOOK_CA_FILE=${certFile}`)
  t.match(receiver.output(), `  ${callbackUrl}\n`)
  const service = await startService(t, { ...env, WEBHOOK_CA_FILE: certFile })
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${service.baseUrl}/v1${path}`, {
      method,
      headers: { 'x-api-key': bot.apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    return (await response.json()) as { id: string; sessionId: string }
  }
  await call('POST', '/variables', { name: 'said', type: 'string' })
  const flow = await call('POST', '/flows', { name: 'Echo', definition: echoFlow })
  await call('POST', `/flows/${flow.id}/publish`)
  const session = await call('POST', `/sessions/flows/${flow.id}/create`)
  t.ok(session.sessionId, assertionMessage(session))
  await eventually('the first webhook at the receiver', () => (receiver.output().includes('Say something') ? true : undefined), 30_000)
  t.match(receiver.output(), /^id {9}[0-9a-f-]{36}$/m)
  t.match(receiver.output(), /^signature {2}verified$/m, 'signed with the key’s secret')
  t.match(receiver.output(), `"sessionId": "${session.sessionId}"`, 'the body, as pretty JSON')
  t.equal(await service.stop(), 0)

  const body = JSON.stringify({ sessionId: unknownId })
  const now = Math.floor(Date.now() / 1000)
  const forged = await postWebhook(callbackUrl, certFile, { 'webhook-id': 'msg_forged', 'webhook-timestamp': String(now), 'webhook-signature': signWebhook(admin.signingSecret, 'msg_forged', now, body) }, body)
  t.equal(forged, 204)
  await eventually('the forged webhook at the receiver', () => (receiver.output().includes('msg_forged') ? true : undefined))
  t.match(receiver.output(), /id {9}msg_forged\ntimestamp .*\nsignature {2}NOT verified: no signature matches the secret\n/)
  t.equal(await receiver.stop(), 0, 'Ctrl-C (SIGTERM) stops it with 0')

  const deliveries = json(await cli('deliveries', 'list', '--session', session.sessionId, '--json'))
  t.equal(deliveries.length, 1)
  t.match(deliveries[0], { sessionId: session.sessionId, status: 'delivered', callbackUrl, attemptCount: 1, attempts: [{ attempt: 1, statusCode: 204 }] })
  const retried = json(await cli('deliveries', 'retry', deliveries[0].id, '--json'))
  t.match(retried, { id: deliveries[0].id, status: 'pending' })
  const again = await cli('deliveries', 'retry', deliveries[0].id)
  t.equal(again.code, 4, 'a queued delivery refuses a retry: exit code 4')
  t.match(again.stderr, 'is pending: it is still queued')
  const noDelivery = await cli('deliveries', 'retry', unknownId)
  t.equal(noDelivery.code, 3)

  // The retried delivery meets its receiver gone: one refused attempt makes the destination failing here.
  t.same(json(await cli('deliveries', 'destinations', '--json')), [], 'no destination has failed yet')
  const again2 = await startService(t, { ...env, WEBHOOK_CA_FILE: certFile, WEBHOOK_FAILURES_BEFORE_FAILING: '1', WEBHOOK_PROBE_SCHEDULE: '3600' })
  await eventually('the destination failing', async () => {
    const response = await fetch(`${again2.baseUrl}/v1/webhooks/destinations?state=failing`, { headers: { 'x-api-key': bot.apiKey } })
    return ((await response.json()) as { content: unknown[] }).content.length > 0 ? true : undefined
  }, 30_000)
  t.equal(await again2.stop(), 0)
  const [failing] = json(await cli('deliveries', 'destinations', '--state', 'failing', '--json'))
  t.match(failing, { workspaceId: admin.workspaceId, destination: `https://127.0.0.1:${port}`, state: 'failing', heldDeliveries: 1, lastError: /ECONNREFUSED/ }, 'the operator sees the failing destination and why')
  const table = await cli('deliveries', 'destinations')
  t.match(table.stdout, /failing/)
})
