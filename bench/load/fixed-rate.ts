// The end-to-end load generator and webhook receiver, in ONE process of its own, so that the 202 of
// a send and the arrival of its webhook are timed by the same clock (performance.now()):
//
// - an HTTPS server on 127.0.0.1 (the certificate made by bench/lib/certificate.ts) that answers
//   every webhook 204 at once, notes when each arrived (its whole body read) under the body's
//   `messageId`, and checks the Standard Webhooks signature of every `verifyEvery`-th one;
// - an open-loop sender: POST /v1/sessions/{id}/message at a fixed rate whatever the answers do
//   (the i-th send is due at start + i / rate; an undici Pool of many connections carries them; a
//   send due while all are busy waits for one, and is dropped as `shed` if none frees within 10 s),
//   going round the sessions so that each session gets one message every sessions / rate seconds.
//
// It also creates the sessions (after the receiver is up: their start webhooks must find it, or
// the session's later webhooks would queue behind a retry), runs a warm-up and then the measured
// phase, and waits for the webhooks of each up to a drain timeout.

import { createHmac, timingSafeEqual } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { Agent, request as httpRequest } from 'node:http'
import { createServer } from 'node:https'
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
import { Pool } from 'undici'
import { sleep, workerMain } from '../lib/processes.js'
import { Samples, summarize, type LatencySummary } from '../lib/stats.js'

export interface FixedRateInput {
  base: string
  /** A key whose callback URL is this receiver: sessions created with it send their webhooks here. */
  apiKey: string
  signingSecret: string
  flowId: string
  sessions: number
  /** Messages per second, open loop. */
  rate: number
  warmupSeconds: number
  durationSeconds: number
  /** How long to wait, after the last 202 of a phase, for the webhooks still missing. */
  drainSeconds: number
  /** Connections of the sender's pool: the most requests in flight at once. */
  connections: number
  receiver: { port: number; keyFile: string; certFile: string }
  /** Check the signature of every n-th webhook (1: all). */
  verifyEvery: number
  /** Session streams (GET /v1/sessions/{id}/stream) held open, one on each of the first this many sessions. */
  streams: number
}

/** One measured message, in wall-clock milliseconds (performance.timeOrigin + performance.now()). */
export interface MessageTimes {
  messageId: string
  sessionId: string
  scheduledAt: number
  acceptedAt: number
  /** NaN when its webhook did not arrive within the drain timeout. */
  webhookAt: number
  /** When its turn came on its session's stream; NaN without a stream or when it did not come. */
  streamAt: number
}

export interface PhaseOutput {
  seconds: number
  scheduled: number
  /** Sends per second the schedule kept (each due send queued at its time; first due time to last). */
  sendRate: number
  /** 202s per second over the phase. */
  acceptedRate: number
  accepted: number
  /** Answers by status (`error` for a request that failed without one, `shed` for a send dropped unsent after 10 s). */
  statusCodes: Record<string, number>
  firstError?: string
  /** 202s whose webhook did not arrive by the end of the drain. */
  missing: number
  /** From the 202 arriving here to the webhook arriving here (negative when the webhook came first). */
  acceptedToWebhookMs: LatencySummary
  webhookBefore202: number
  /** From the moment the send was due to the webhook: what a user waits for an answer. */
  sendToWebhookMs: LatencySummary
  /** Of the 202s, from the moment the send was due (so waiting for a free connection counts). */
  acceptLatencyMs: LatencySummary
  /** Of the 202s, from the moment the request went out on a connection. */
  acceptLatencyFromDispatchMs: LatencySummary
  /** How late sends went out against their due time: waiting for a free connection, the sender's timer and event loop. */
  dispatchLagMs: LatencySummary
  maxInFlight: number
  /** Per second of the phase: sends made, 202s received, webhooks of this phase's messages received. */
  sentEachSecond: number[]
  acceptedEachSecond: number[]
  webhooksEachSecond: number[]
  /** 202 → webhook p99 of the messages sent in each second: whether the slowest cluster in time. */
  acceptedToWebhookP99EachSecond: number[]
  /** From the last 202 until every webhook was in (or the drain timed out), in seconds. */
  drainSeconds: number
  /** 202s of sessions with an open stream, and those whose turn did not come on it. */
  streamed: number
  streamMissing: number
  /** From the 202 arriving here to the turn arriving on the session's stream. */
  acceptedToStreamMs: LatencySummary
}

export interface FixedRateOutput {
  sessionsCreatedSeconds: number
  warmup: PhaseOutput
  measured: PhaseOutput
  /** Every message of the measured phase, for the breakdown by stage against the database's timestamps. */
  measuredMessages: MessageTimes[]
  receiver: {
    webhooks: number
    /** Webhooks whose messageId was seen before (the same webhook delivered again). */
    duplicates: number
    /** Webhooks of a session's start turn (not timed). */
    startWebhooks: number
    signaturesChecked: number
    signatureFailures: number
    /** CPU time per signature check, in microseconds. */
    verifyUsEach: number
    /** Requests that were not a webhook body (wrong method, unparsable JSON). */
    malformed: number
  }
  /** Session streams opened, and still open at the end (a stream closes only when its session ends). */
  streams: { opened: number; openAtEnd: number; turnEvents: number; failures: number; firstFailure?: string }
  /** Event-loop delay of this process while the measured sends ran (its own timing error), in ms beyond a 10 ms timer. */
  eventLoopDelayMs: { p50: number; p99: number; max: number }
  /** CPU this process used while the measured sends ran, in average cores. */
  cpuCores: number
  maxRssBytes: number
}

const wall = (t: number) => performance.timeOrigin + t
/** A send still waiting for a free connection this long after it was due is dropped (counted as shed). */
const SHED_AFTER_MS = 10_000
/** A request sent gets this long for its answer. */
const REQUEST_TIMEOUT_MS = 30_000

workerMain<FixedRateInput, FixedRateOutput>(async (input, progress) => {
  // --- The receiver ---------------------------------------------------------------------------
  const arrivals = new Map<string, number>()
  const sessionsHeardFrom = new Set<string>()
  const key = Buffer.from(input.signingSecret.replace(/^whsec_/, ''), 'base64')
  const receiver = { webhooks: 0, duplicates: 0, startWebhooks: 0, signaturesChecked: 0, signatureFailures: 0, verifyUsEach: 0, malformed: 0 }
  let verifyNs = 0n
  let expectStart = true
  const verify = (headers: Record<string, string | string[] | undefined>, raw: string): boolean => {
    const id = String(headers['webhook-id'] ?? '')
    const timestamp = String(headers['webhook-timestamp'] ?? '')
    const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${raw}`).digest()
    const fresh = Math.abs(Date.now() / 1000 - Number(timestamp)) <= 300
    return (
      fresh &&
      String(headers['webhook-signature'] ?? '').split(' ').some((entry) => {
        const [version, signature] = entry.split(',')
        const given = Buffer.from(signature ?? '', 'base64')
        return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected)
      })
    )
  }
  const server = createServer({ key: readFileSync(input.receiver.keyFile), cert: readFileSync(input.receiver.certFile) }, (req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const arrived = performance.now()
      res.writeHead(204)
      res.end()
      const raw = Buffer.concat(chunks).toString('utf8')
      let body: { messageId?: unknown; sessionId?: unknown }
      try {
        body = JSON.parse(raw) as typeof body
      } catch {
        receiver.malformed++
        return
      }
      if (req.method !== 'POST' || typeof body.messageId !== 'string' || typeof body.sessionId !== 'string') {
        receiver.malformed++
        return
      }
      receiver.webhooks++
      if (receiver.webhooks % input.verifyEvery === 0) {
        const t0 = process.hrtime.bigint()
        if (!verify(req.headers, raw)) receiver.signatureFailures++
        verifyNs += process.hrtime.bigint() - t0
        receiver.signaturesChecked++
      }
      if (arrivals.has(body.messageId)) receiver.duplicates++
      else arrivals.set(body.messageId, arrived)
      if (expectStart && !sessionsHeardFrom.has(body.sessionId)) receiver.startWebhooks++
      sessionsHeardFrom.add(body.sessionId)
    })
  })
  server.keepAliveTimeout = 30_000
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(input.receiver.port, '127.0.0.1', () => resolve())
  })

  const pool = new Pool(input.base, { connections: input.connections, pipelining: 1, keepAliveTimeout: 30_000 })
  const headers = { 'x-api-key': input.apiKey, 'content-type': 'application/json' }
  try {
    // --- Sessions (their start webhooks prove the whole path before anything is timed) ----------
    const setupStarted = performance.now()
    const sessionIds: string[] = []
    let nextSession = 0
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (nextSession < input.sessions) {
          nextSession++
          const res = await pool.request({ method: 'POST', path: `/v1/sessions/flows/${input.flowId}/create`, headers: { 'x-api-key': input.apiKey } })
          const text = await res.body.text()
          if (res.statusCode !== 201) throw new Error(`creating a session: ${res.statusCode} ${text}`)
          sessionIds.push((JSON.parse(text) as { sessionId: string }).sessionId)
        }
      }),
    )
    const startDeadline = performance.now() + 120_000
    while (sessionIds.some((id) => !sessionsHeardFrom.has(id))) {
      if (performance.now() > startDeadline) {
        throw new Error(`only ${sessionIds.filter((id) => sessionsHeardFrom.has(id)).length} of ${sessionIds.length} start webhooks arrived within 120 s`)
      }
      await sleep(100)
    }
    expectStart = false
    const sessionsCreatedSeconds = (performance.now() - setupStarted) / 1000
    progress({ phase: 'sessions', seconds: sessionsCreatedSeconds })

    // --- Session streams, each on a connection of its own, noting when each turn arrives ------------
    const streamArrivals = new Map<string, number>()
    const streamedSessions = new Set(sessionIds.slice(0, input.streams))
    const streams = { opened: 0, openAtEnd: 0, turnEvents: 0, failures: 0, firstFailure: undefined as string | undefined }
    const streamAgent = new Agent({ keepAlive: false, maxSockets: Infinity })
    const openStreams = new Set<{ destroy(): void }>()
    const openStream = (sessionId: string) =>
      new Promise<void>((resolve, reject) => {
        const req = httpRequest(`${input.base}/v1/sessions/${sessionId}/stream`, { agent: streamAgent, headers: { 'x-api-key': input.apiKey } }, (res) => {
          if (res.statusCode !== 200) {
            res.resume()
            reject(new Error(`opening a session stream: ${res.statusCode}`))
            return
          }
          streams.opened++
          openStreams.add(req)
          res.once('close', () => openStreams.delete(req))
          resolve()
          let buffer = ''
          res.setEncoding('utf8').on('data', (chunk: string) => {
            const arrived = performance.now()
            buffer += chunk
            let end: number
            while ((end = buffer.indexOf('\n\n')) >= 0) {
              const block = buffer.slice(0, end)
              buffer = buffer.slice(end + 2)
              if (!block.startsWith('event: turn\n')) continue
              const data = block.slice(block.indexOf('data: ') + 6)
              const messageId = /"messageId":"([^"]+)"/.exec(data)?.[1]
              streams.turnEvents++
              if (messageId && !streamArrivals.has(messageId)) streamArrivals.set(messageId, arrived)
            }
          })
        })
        req.once('error', (error) => {
          streams.failures++
          streams.firstFailure ??= error.message
          reject(error)
        })
        req.end()
      })
    let nextStream = 0
    const toOpen = [...streamedSessions]
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (nextStream < toOpen.length) await openStream(toOpen[nextStream++]!)
      }),
    )
    if (input.streams > 0) progress({ phase: 'streams', opened: streams.opened })

    // --- One phase at the fixed rate ---------------------------------------------------------------
    const body = JSON.stringify({ type: 'text', text: { body: 'hello from the benchmark' } })
    let cursor = 0
    const runPhase = async (seconds: number, onStart?: () => void, onAnswered?: () => void) => {
      const total = Math.round(input.rate * seconds)
      const interval = 1000 / input.rate
      const due = new Float64Array(total)
      const dispatched = new Float64Array(total)
      const answered = new Float64Array(total).fill(Number.NaN)
      const status = new Int16Array(total)
      const ids = new Array<string | undefined>(total)
      const sessionOf = new Array<string>(total)
      const statusCodes: Record<string, number> = {}
      // Sends due while every connection is busy wait here, oldest first (the pool is never asked
      // to queue, so a request handed to it is sent at once and its timeout is its own).
      const waiting: number[] = []
      let nextWaiting = 0
      let firstError: string | undefined
      let inFlight = 0
      let maxInFlight = 0
      let allSent!: () => void
      const settled = new Promise<void>((resolve) => (allSent = resolve))
      let answers = 0
      const onAnswer = () => {
        inFlight--
        if (++answers === total) allSent()
        sendWaiting()
      }
      const sendWaiting = () => {
        while (inFlight < input.connections && nextWaiting < waiting.length) {
          const k = waiting[nextWaiting++]!
          if (performance.now() - due[k]! > SHED_AFTER_MS) {
            // Never sent: the service was too far behind to take it.
            statusCodes.shed = (statusCodes.shed ?? 0) + 1
            dispatched[k] = Number.NaN
            if (++answers === total) allSent()
            continue
          }
          send(k)
        }
      }
      const send = (i: number) => {
        const sessionId = sessionIds[cursor++ % sessionIds.length]!
        sessionOf[i] = sessionId
        dispatched[i] = performance.now()
        inFlight++
        if (inFlight > maxInFlight) maxInFlight = inFlight
        pool
          .request({ method: 'POST', path: `/v1/sessions/${sessionId}/message`, headers, body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
          .then(async (res) => {
            const text = await res.body.text()
            answered[i] = performance.now()
            status[i] = res.statusCode
            statusCodes[res.statusCode] = (statusCodes[res.statusCode] ?? 0) + 1
            if (res.statusCode === 202) ids[i] = (JSON.parse(text) as { messageId: string }).messageId
            else firstError ??= `${res.statusCode} ${text.slice(0, 300)}`
          })
          .catch((error: unknown) => {
            statusCodes.error = (statusCodes.error ?? 0) + 1
            firstError ??= error instanceof Error ? error.message : String(error)
          })
          .finally(onAnswer)
      }
      onStart?.()
      const t0 = performance.now() + 5
      for (let i = 0; i < total; i++) due[i] = t0 + i * interval
      let i = 0
      while (i < total) {
        const now = performance.now()
        while (i < total && due[i]! <= now) waiting.push(i++)
        sendWaiting()
        if (i < total) await sleep(Math.max(0, due[i]! - performance.now()))
      }
      // The schedule kept: every send was due and queued (sent at once when a connection was free).
      const lastSend = performance.now()
      if (total === 0) allSent()
      await settled
      const answersDone = performance.now()
      onAnswered?.()
      // Drain: wait for the webhooks of every 202.
      const accepted: number[] = []
      for (let k = 0; k < total; k++) if (ids[k] !== undefined) accepted.push(k)
      const drainDeadline = answersDone + input.drainSeconds * 1000
      const arrivedEverywhere = (k: number) => arrivals.has(ids[k]!) && (!streamedSessions.has(sessionOf[k]!) || streamArrivals.has(ids[k]!))
      while (accepted.some((k) => !arrivedEverywhere(k)) && performance.now() < drainDeadline) await sleep(50)
      const drainSeconds = (performance.now() - answersDone) / 1000

      const e2e = new Samples()
      const sendToWebhook = new Samples()
      const accept = new Samples()
      const acceptFromDispatch = new Samples()
      const lag = new Samples()
      const perSecond = (series: number[], t: number) => {
        const s = Math.floor((t - t0) / 1000)
        if (s >= 0) series[s] = (series[s] ?? 0) + 1
      }
      const sentEachSecond: number[] = []
      const acceptedEachSecond: number[] = []
      const webhooksEachSecond: number[] = []
      const e2eEachSecond: number[][] = []
      let missing = 0
      let before202 = 0
      let streamed = 0
      let streamMissing = 0
      const acceptedToStream = new Samples()
      const messages: MessageTimes[] = []
      for (let k = 0; k < total; k++) {
        if (Number.isNaN(dispatched[k]!)) continue
        lag.push(dispatched[k]! - due[k]!)
        perSecond(sentEachSecond, dispatched[k]!)
      }
      for (const k of accepted) {
        accept.push(answered[k]! - due[k]!)
        acceptFromDispatch.push(answered[k]! - dispatched[k]!)
        perSecond(acceptedEachSecond, answered[k]!)
        const arrived = arrivals.get(ids[k]!)
        if (arrived === undefined) missing++
        else {
          e2e.push(arrived - answered[k]!)
          const second = Math.max(0, Math.floor((due[k]! - t0) / 1000))
          ;(e2eEachSecond[second] ??= []).push(arrived - answered[k]!)
          sendToWebhook.push(arrived - due[k]!)
          if (arrived < answered[k]!) before202++
          perSecond(webhooksEachSecond, arrived)
        }
        const onStream = streamArrivals.get(ids[k]!)
        if (streamedSessions.has(sessionOf[k]!)) {
          streamed++
          if (onStream === undefined) streamMissing++
          else acceptedToStream.push(onStream - answered[k]!)
        }
        messages.push({
          messageId: ids[k]!,
          sessionId: sessionOf[k]!,
          scheduledAt: wall(due[k]!),
          acceptedAt: wall(answered[k]!),
          webhookAt: arrived === undefined ? Number.NaN : wall(arrived),
          streamAt: onStream === undefined ? Number.NaN : wall(onStream),
        })
      }
      const dense = (series: number[]) => Array.from(series, (n) => n ?? 0)
      const output: PhaseOutput = {
        seconds,
        scheduled: total,
        sendRate: total > 1 ? (total - 1) / ((lastSend - t0) / 1000) : total,
        acceptedRate: accepted.length / seconds,
        accepted: accepted.length,
        statusCodes,
        ...(firstError ? { firstError } : {}),
        missing,
        acceptedToWebhookMs: summarize(e2e.values()),
        webhookBefore202: before202,
        sendToWebhookMs: summarize(sendToWebhook.values()),
        acceptLatencyMs: summarize(accept.values()),
        acceptLatencyFromDispatchMs: summarize(acceptFromDispatch.values()),
        dispatchLagMs: summarize(lag.values()),
        maxInFlight,
        sentEachSecond: dense(sentEachSecond),
        acceptedEachSecond: dense(acceptedEachSecond),
        webhooksEachSecond: dense(webhooksEachSecond),
        acceptedToWebhookP99EachSecond: Array.from(e2eEachSecond, (latencies) => (latencies ? Math.round(summarize(latencies).p99) : 0)),
        drainSeconds,
        streamed,
        streamMissing,
        acceptedToStreamMs: summarize(acceptedToStream.values()),
      }
      return { output, messages }
    }

    progress({ phase: 'warmup' })
    const warmup = await runPhase(input.warmupSeconds)
    await sleep(1_000)
    const loopDelay = monitorEventLoopDelay({ resolution: 10 })
    const cpuBefore = process.cpuUsage()
    const measuredStarted = performance.now()
    let cpu = { user: 0, system: 0 }
    let measuredSeconds = 0
    const measured = await runPhase(
      input.durationSeconds,
      () => {
        progress({ phase: 'measured' })
        loopDelay.enable()
      },
      () => {
        // Every send of the measured phase is answered: from here on only webhooks are drained.
        loopDelay.disable()
        cpu = process.cpuUsage(cpuBefore)
        measuredSeconds = (performance.now() - measuredStarted) / 1000
        progress({ phase: 'answered' })
      },
    )
    progress({ phase: 'drained' })
    streams.openAtEnd = openStreams.size
    for (const stream of openStreams) stream.destroy()
    // The histogram holds whole timer intervals; what is beyond the 10 ms resolution is the delay.
    const ms = (ns: number) => Math.max(0, Math.round((ns / 1e6 - 10) * 100) / 100)
    return {
      sessionsCreatedSeconds,
      warmup: warmup.output,
      measured: measured.output,
      measuredMessages: measured.messages,
      streams,
      receiver: { ...receiver, verifyUsEach: receiver.signaturesChecked ? Math.round(Number(verifyNs / BigInt(receiver.signaturesChecked)) / 10) / 100 : 0 },
      eventLoopDelayMs: { p50: ms(loopDelay.percentile(50)), p99: ms(loopDelay.percentile(99)), max: ms(loopDelay.max) },
      cpuCores: Math.round(((cpu.user + cpu.system) / 1e6 / measuredSeconds) * 100) / 100,
      maxRssBytes: process.resourceUsage().maxRSS * 1024,
    }
  } finally {
    await pool.close().catch(() => {})
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
})
