import { randomUUID } from 'node:crypto'
import type pg from 'pg'
import type { Logger } from '../logger.js'

/** A piece of a model's reply as it is generated, before the turn that sends the whole of it is recorded. */
export interface TextPiece {
  sessionId: string
  /** The trigger whose turn makes the call. */
  messageId: string
  nodeId: string
  /** The text added since the last piece. */
  text: string
}

type PieceListener = (piece: TextPiece) => void

/** The channel pieces travel on between processes. */
const CHANNEL = 'flowd_generated_text'
/** NOTIFY carries at most 8000 bytes; a longer piece goes in parts. */
const MAX_PAYLOAD_TEXT = 2000
/** Pieces for other processes go together, at most one NOTIFY a call this often: each is a commit. */
const NOTIFY_EVERY_MS = 100
/** How often to look again whether another process listens. */
const LISTENERS_RECHECK_MS = 1000
const LISTENER_NAME = `flowd-listen:${CHANNEL}`

/**
 * Hands the pieces of a model's reply to the session streams open on its session, as the engine
 * reads them: in this process directly, and on Postgres by NOTIFY to the other processes (an API
 * process apart from the engine's), which LISTEN while they have a stream open. Pieces are a view
 * of a call in flight, never a record: a stream that misses one still gets the whole text with the
 * turn, and nothing replays them.
 */
export class GeneratedText {
  private readonly listeners = new Map<string, Set<PieceListener>>()
  private readonly origin = randomUUID()
  private readonly pool?: pg.Pool
  private readonly logger?: Pick<Logger, 'warn'>
  private listening?: Promise<pg.PoolClient | undefined>
  private listenerPid = 0
  private closed = false
  /** Pieces not yet sent to other processes, joined per call. */
  private readonly unsent = new Map<string, TextPiece>()
  private flushTimer?: NodeJS.Timeout
  /** NOTIFYs go one after another, so that a call's pieces arrive in order. */
  private sending: Promise<void> = Promise.resolve()
  private othersListen = { listen: true, checkedAt: Number.NEGATIVE_INFINITY }

  constructor(pool?: pg.Pool, logger?: Pick<Logger, 'warn'>) {
    this.pool = pool
    this.logger = logger
  }

  /** Hands a piece to this process's streams and, on Postgres, to the other processes'. */
  publish(piece: TextPiece): void {
    this.deliver(piece)
    if (!this.pool || this.closed) return
    const key = `${piece.sessionId}/${piece.messageId}/${piece.nodeId}`
    const held = this.unsent.get(key)
    this.unsent.set(key, held ? { ...held, text: held.text + piece.text } : piece)
    this.flushTimer ??= setTimeout(() => this.flush(), NOTIFY_EVERY_MS)
  }

  private flush(): void {
    this.flushTimer = undefined
    const pieces = [...this.unsent.values()]
    this.unsent.clear()
    const pool = this.pool!
    this.sending = this.sending.then(async () => {
      if (!(await this.anotherProcessListens(pool))) return
      for (const piece of pieces) {
        for (let at = 0; at < piece.text.length; at += MAX_PAYLOAD_TEXT) {
          const payload = JSON.stringify({ origin: this.origin, piece: { ...piece, text: piece.text.slice(at, at + MAX_PAYLOAD_TEXT) } })
          await pool.query('select pg_notify($1, $2)', [CHANNEL, payload]).catch((error: unknown) => this.logger?.warn({ err: error }, 'a piece of generated text was not sent to the other processes'))
        }
      }
    })
  }

  /** Whether a process other than this one listens: one alone on its database (the usual deployment) sends no NOTIFY. */
  private async anotherProcessListens(pool: pg.Pool): Promise<boolean> {
    if (performance.now() - this.othersListen.checkedAt < LISTENERS_RECHECK_MS) return this.othersListen.listen
    const listen = await pool
      .query<{ listen: boolean }>('select exists (select 1 from pg_stat_activity where datname = current_database() and application_name = $1 and pid <> $2) as listen', [LISTENER_NAME, this.listenerPid])
      .then(({ rows }) => rows[0]?.listen ?? true, () => true)
    this.othersListen = { listen, checkedAt: performance.now() }
    return listen
  }

  /** Calls `listener` with each piece of the session's replies from now on; answers how to stop. */
  async listen(sessionId: string, listener: PieceListener): Promise<() => void> {
    let ofSession = this.listeners.get(sessionId)
    if (!ofSession) this.listeners.set(sessionId, (ofSession = new Set()))
    ofSession.add(listener)
    await this.startListening()
    return () => {
      ofSession.delete(listener)
      if (ofSession.size === 0 && this.listeners.get(sessionId) === ofSession) this.listeners.delete(sessionId)
    }
  }

  async close(): Promise<void> {
    this.closed = true
    clearTimeout(this.flushTimer)
    await this.sending
    const client = await this.listening
    this.listening = undefined
    if (client) {
      await client.query(`unlisten ${CHANNEL}`).catch(() => {})
      client.release()
    }
  }

  private deliver(piece: TextPiece): void {
    for (const listener of this.listeners.get(piece.sessionId) ?? []) listener(piece)
  }

  /** One connection LISTENs for the process, from its first stream on; without Postgres, pieces are this process's alone. */
  private startListening(): Promise<unknown> {
    if (!this.pool || this.closed) return Promise.resolve()
    this.listening ??= (async () => {
      try {
        const client = await this.pool!.connect()
        client.on('notification', (message) => {
          if (message.channel !== CHANNEL || !message.payload) return
          const { origin, piece } = JSON.parse(message.payload) as { origin: string; piece: TextPiece }
          if (origin !== this.origin) this.deliver(piece)
        })
        await client.query(`set application_name = '${LISTENER_NAME}'`)
        await client.query(`listen ${CHANNEL}`)
        this.listenerPid = (client as unknown as { processID?: number }).processID ?? 0
        return client
      } catch (error) {
        this.logger?.warn({ err: error }, "generated text from other processes is not followed; streams show replies when their turn is recorded")
        this.listening = undefined
        return undefined
      }
    })()
    return this.listening
  }
}
