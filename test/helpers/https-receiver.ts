import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { makeSelfSignedCertificate } from '../../src/cli/self-signed-certificate.js'

export interface ReceivedRequest {
  method: string
  path: string
  headers: Record<string, string | string[] | undefined>
  body: string
  /** `performance.now()` when the whole request had arrived. */
  arrivedAt: number
  /** The sender's port: which process sent it, while the connection is open. */
  remotePort: number | undefined
  /** Whether the answer went out; false while it is delayed, and for good when the sender went first. */
  answered: boolean
}

export interface ReceiverResponse {
  status: number
  body?: string
  headers?: Record<string, string>
}

export interface HttpsReceiver {
  /** `https://127.0.0.1:<port>` (no trailing slash). */
  url: string
  port: number
  /** PEM file of the self-signed certificate, to hand to the delivery agent as its CA. */
  caFile: string
  /** Host name (besides IP 127.0.0.1) the certificate is valid for; resolve it with a custom lookup. */
  dnsName: string
  requests: ReceivedRequest[]
  /** Answers the next requests with these, in order; once used up, answers 200. */
  respondWith(responses: (number | ReceiverResponse)[]): void
  /**
   * Answers each following request `ms` after it arrived (0, the default: at once), or only those
   * whose path starts with `pathPrefix`. It is recorded on arrival.
   */
  delay(ms: number, pathPrefix?: string): void
  /**
   * Holds the answers to the following requests until the function it returns is called, which
   * answers them and lets later ones be answered as before. They are recorded on arrival.
   */
  hold(): () => void
  /**
   * How many connections are open to it. Once every sender has exited, zero means the receiver has
   * read all they sent: a connection closes only after the data before its end.
   */
  openConnections(): Promise<number>
  /** Stops listening (connections are refused) until `up`; same port, same certificate. */
  down(): Promise<void>
  up(): Promise<void>
  close(): Promise<void>
}

export const RECEIVER_DNS_NAME = 'receiver.webhooks.test'

/**
 * A real HTTPS server on 127.0.0.1 with a certificate generated now by the openssl CLI
 * (SAN `IP:127.0.0.1` and `DNS:receiver.webhooks.test`). It records every request it gets.
 */
export async function startHttpsReceiver(): Promise<HttpsReceiver> {
  const dir = mkdtempSync(join(tmpdir(), 'flowd-receiver-'))
  const keyFile = join(dir, 'key.pem')
  const caFile = join(dir, 'cert.pem')
  makeSelfSignedCertificate({ keyFile, certFile: caFile }, { commonName: 'flowd test receiver', altNames: ['IP:127.0.0.1', `DNS:${RECEIVER_DNS_NAME}`], days: 1 })
  const requests: ReceivedRequest[] = []
  let queue: ReceiverResponse[] = []
  let delayMs = 0
  let held: (() => void)[] | undefined
  const delayByPath = new Map<string, number>()
  const delayOf = (path: string): number => {
    for (const [prefix, ms] of delayByPath) if (path.startsWith(prefix)) return ms
    return delayMs
  }
  const server = createServer({ key: readFileSync(keyFile), cert: readFileSync(caFile) }, (req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const request: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: { ...req.headers },
        body: Buffer.concat(chunks).toString('utf8'),
        arrivedAt: performance.now(),
        remotePort: req.socket.remotePort,
        answered: false,
      }
      requests.push(request)
      res.once('finish', () => (request.answered = true))
      const next = queue.shift() ?? { status: 200, body: 'ok' }
      const respond = () => {
        // The sender may have gone (killed) while the answer waited.
        if (res.destroyed) return
        res.writeHead(next.status, next.headers)
        res.end(next.body ?? '')
      }
      const wait = delayOf(request.path)
      if (held) held.push(respond)
      else if (wait > 0) setTimeout(respond, wait)
      else respond()
    })
  })
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject)
        resolve()
      })
    })
  const stop = async () => {
    if (!server.listening) return
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
  await listen(0)
  const { port } = server.address() as AddressInfo
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    caFile,
    dnsName: RECEIVER_DNS_NAME,
    requests,
    respondWith(responses) {
      queue = responses.map((r) => (typeof r === 'number' ? { status: r } : r))
    },
    delay(ms, pathPrefix) {
      if (pathPrefix === undefined) delayMs = ms
      else delayByPath.set(pathPrefix, ms)
    },
    hold() {
      const answers: (() => void)[] = []
      held = answers
      return () => {
        if (held === answers) held = undefined
        for (const answer of answers) answer()
      }
    },
    openConnections: () => new Promise((resolve, reject) => server.getConnections((err, count) => (err ? reject(err) : resolve(count)))),
    down: stop,
    up: () => listen(port),
    async close() {
      await stop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
