import { timingSafeEqual, X509Certificate } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { secretKey, signWebhook } from '../webhooks/signature.js'
import type { CliContext } from './main.js'
import { makeSelfSignedCertificate, type SelfSignedCertificate } from './self-signed-certificate.js'
import { UsageError } from './usage.js'

const HELP = `Usage: flowd dev-receiver [--port 4000] [--secret whsec_…]

A webhook receiver for development: an HTTPS server on 127.0.0.1 with a self-signed certificate
(made with the openssl command and kept in DATA_DIR/dev-receiver, so restarts reuse it). It prints
each webhook as it arrives (id, timestamp, whether its signature verifies against --secret by the
Standard Webhooks scheme, the JSON body) and answers 204. It prints how to point the service at
it; any path is accepted. --port 0 picks a free port. Stop it with Ctrl-C.

Exit codes: 0 stopped, 1 failed (e.g. the port is taken, no openssl), 2 usage error.`

/** Standard Webhooks: receivers refuse timestamps further than this from their clock (replays). */
const TOLERANCE_SECONDS = 5 * 60

function certificate(dir: string): SelfSignedCertificate {
  const keyFile = join(dir, 'key.pem')
  const certFile = join(dir, 'cert.pem')
  if (existsSync(keyFile) && existsSync(certFile)) {
    const cert = new X509Certificate(readFileSync(certFile))
    const aDayAhead = Date.now() + 24 * 3600 * 1000
    if (new Date(cert.validTo).getTime() > aDayAhead && cert.checkIP('127.0.0.1')) return { keyFile, certFile }
  }
  mkdirSync(dir, { recursive: true })
  return makeSelfSignedCertificate({ keyFile, certFile }, { commonName: 'flowd dev-receiver', altNames: ['IP:127.0.0.1'], days: 365 })
}

const header = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value)

/** Whether the webhook is signed with `secret` (any of the space-separated `v1,` signatures) and fresh. */
export function verification(secret: string | undefined, headers: Record<string, string | string[] | undefined>, body: string, nowSeconds: number): string {
  if (!secret) return 'not checked (start with --secret whsec_… to check signatures)'
  const id = header(headers['webhook-id'])
  const timestamp = header(headers['webhook-timestamp'])
  const signatures = header(headers['webhook-signature'])
  if (!id || !timestamp || !signatures) return 'NOT verified: webhook-id, webhook-timestamp or webhook-signature missing'
  const seconds = Number(timestamp)
  if (!/^\d+$/.test(timestamp)) return `NOT verified: webhook-timestamp '${timestamp}' is not a number of seconds`
  const expected = Buffer.from(signWebhook(secret, id, seconds, body))
  const matches = signatures.split(' ').some((candidate) => {
    const given = Buffer.from(candidate)
    return given.length === expected.length && timingSafeEqual(given, expected)
  })
  if (!matches) return 'NOT verified: no signature matches the secret'
  if (Math.abs(nowSeconds - seconds) > TOLERANCE_SECONDS) return `NOT verified: timestamp is ${nowSeconds - seconds} s away from this clock (more than ${TOLERANCE_SECONDS} s)`
  return 'verified'
}

const prettyBody = (body: string): string => {
  try {
    return JSON.stringify(JSON.parse(body), null, 2)
  } catch {
    return body
  }
}

export async function devReceiverCommand({ config, args }: CliContext): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      port: { type: 'string', default: '4000' },
      secret: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  if (values.help) {
    process.stdout.write(`${HELP}\n`)
    return 0
  }
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'\n\n${HELP}`)
  const port = Number(values.port)
  if (!/^\d+$/.test(values.port) || port > 65535) throw new UsageError(`--port must be a port number (0 to 65535), got '${values.port}'`)
  const secret = values.secret
  if (secret !== undefined) {
    try {
      secretKey(secret)
    } catch (error) {
      throw new UsageError(`--secret: ${(error as Error).message}`)
    }
  }

  const { keyFile, certFile } = certificate(join(config.dataDir, 'dev-receiver'))
  const server = createServer({ key: readFileSync(keyFile), cert: readFileSync(certFile) }, (req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const timestamp = header(req.headers['webhook-timestamp'])
      const when = timestamp && /^\d+$/.test(timestamp) ? ` (${new Date(Number(timestamp) * 1000).toISOString()})` : ''
      process.stdout.write(
        [
          `── ${new Date().toISOString()}  ${req.method} ${req.url}`,
          `id         ${header(req.headers['webhook-id']) ?? '-'}`,
          `timestamp  ${timestamp ?? '-'}${when}`,
          `signature  ${verification(secret, req.headers, body, Math.floor(Date.now() / 1000))}`,
          prettyBody(body),
          '',
        ].join('\n'),
      )
      res.writeHead(204).end()
    })
  })
  await listen(server, port)
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`
  process.stdout.write(
    [
      `flowd dev-receiver listening on ${url}`,
      `certificate  ${certFile} (self-signed, for IP 127.0.0.1)`,
      `signatures   ${secret ? 'checked against --secret' : 'not checked: start with --secret whsec_… to check them'}`,
      '',
      'Start the service so that it may call this receiver and trusts its certificate:',
      `  WEBHOOK_ALLOWED_PRIVATE_CIDRS=127.0.0.1/32 WEBHOOK_CA_FILE=${certFile} npm start`,
      'and give the API key this callback URL:',
      `  ${url}/webhooks`,
      '',
      'Waiting for webhooks (Ctrl-C stops).',
      '',
    ].join('\n'),
  )

  await new Promise<void>((resolve) => {
    const stop = () => {
      server.closeAllConnections()
      server.close(() => resolve())
    }
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
  })
  return 0
}

const listen = (server: Server, port: number) =>
  new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject)
      resolve()
    })
  })
