import type { EventMetadata, EventStore, Position } from '../eventstore/port.js'
import type { Logger } from '../logger.js'

/** Lets a writer wait until its events show in the read models. */
export interface ReadModels {
  waitFor(stream: string, position: Position, options?: { timeoutMs?: number; eventTypes?: readonly string[] }): Promise<boolean>
}

export interface CommandContext {
  store: EventStore
  readModels: ReadModels
  logger: Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>
  /** Carried into every event's metadata: who acted, in which workspace, for which request. */
  metadata: EventMetadata
  now(): Date
}

/**
 * Read-your-writes: the write already succeeded; this only delays the answer until the lists show
 * it, bounded, and logs when they lag.
 */
export async function awaitReadModels(ctx: CommandContext, written: { stream: string; position: Position | undefined; events?: readonly { type: string }[] }): Promise<void> {
  if (!written.position) return
  const visible = await ctx.readModels.waitFor(written.stream, written.position, { eventTypes: written.events?.map((e) => e.type) })
  if (!visible) ctx.logger.warn({ stream: written.stream }, 'read models lag behind a write; answering anyway')
}
