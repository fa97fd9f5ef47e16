import { createHash } from 'node:crypto'
import { START, type EventStore, type RecordedEvent } from '../eventstore/port.js'
import { toEnvelope } from './envelope.js'

/**
 * Which events belong to a workspace: those whose metadata names it, and those without a workspace
 * in their metadata (e.g. `SessionExpired`, written by the expiry sweeper) whose stream an earlier
 * event assigned to it. Keeps only the workspace's stream names, never events.
 */
export class WorkspaceFilter {
  private readonly streams = new Set<string>()

  private readonly workspaceId: string

  constructor(workspaceId: string) {
    this.workspaceId = workspaceId
  }

  includes(event: RecordedEvent): boolean {
    const named = event.metadata.workspaceId
    if (named === undefined) return this.streams.has(event.stream)
    if (named !== this.workspaceId) return false
    this.streams.add(event.stream)
    return true
  }
}

export interface ExportProgress {
  /** Events of the log read so far (of every workspace). */
  scanned: number
  exported: number
}

/**
 * The lines of a workspace's export: each of its events as a JSON envelope, in the global log's
 * order, then `{"checksum":"sha256:…","events":N}` where the hash is over the bytes of every line
 * before it (newlines included). Reads the log a page at a time: memory does not grow with it.
 */
export async function* workspaceExportLines(
  store: EventStore,
  workspaceId: string,
  options: { pageSize?: number; onProgress?: (progress: ExportProgress) => void } = {},
): AsyncGenerator<string> {
  const filter = new WorkspaceFilter(workspaceId)
  const hash = createHash('sha256')
  const progress: ExportProgress = { scanned: 0, exported: 0 }
  for (let from = START; ; ) {
    const page = await store.readAll({ from, limit: options.pageSize ?? 500 })
    if (page.length === 0) break
    for (const event of page) {
      if (!filter.includes(event)) continue
      const line = `${JSON.stringify(toEnvelope(event))}\n`
      hash.update(line)
      progress.exported++
      yield line
    }
    progress.scanned += page.length
    options.onProgress?.(progress)
    from = page[page.length - 1]!.position
  }
  yield `${JSON.stringify({ checksum: `sha256:${hash.digest('hex')}`, events: progress.exported })}\n`
}
