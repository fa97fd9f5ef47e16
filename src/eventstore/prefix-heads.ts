import { START, comparePositions, headsOfFilters, prefixesOf, type Position, type StreamFilter } from './port.js'

/** An event as the head of its streams sees it: where it is and in which stream. */
export interface LoggedEvent {
  stream: string
  position: Position
}

/** The log's events newest first, from its newest event; the caller may stop early. */
export type NewestFirst = () => AsyncIterable<LoggedEvent>

const newer = (a: Position, b: Position | undefined): boolean => b === undefined || comparePositions(a, b) > 0

/**
 * The newest event of each stream prefix, for a store that cannot read its log filtered by stream
 * from the newest end (EventStoreDB through client 6.2, whose reads of `$all` take no filter).
 * A probe reads the log backwards only down to where the previous probe began, so each event is
 * read once per process, whatever the number of probes; only a prefix asked for the first time is
 * looked for further back, down to its newest event (the whole log, for a prefix without events).
 * Events this process appends or is handed are counted in between ({@link saw}).
 */
export class PrefixHeads {
  /** Every prefix asked for so far, with its newest event known ({@link START}: none). */
  private readonly heads = new Map<string, Position>()
  /** Every event up to here is counted in {@link heads}. */
  private readThrough: Position | undefined
  private probing: Promise<void> | undefined
  private probesStarted = 0
  /** The newest finished probe: its number in start order, and when it began. */
  private probed = { number: 0, at: Number.NEGATIVE_INFINITY }

  private readonly newestFirst: NewestFirst
  private readonly now: () => number

  constructor(newestFirst: NewestFirst, now: () => number = () => performance.now()) {
    this.newestFirst = newestFirst
    this.now = now
  }

  /** An event known to exist: a head it is newer than moves to it. */
  saw(stream: string, position: Position): void {
    for (const [prefix, head] of this.heads) {
      if (stream.startsWith(prefix) && newer(position, head)) this.heads.set(prefix, position)
    }
  }

  /**
   * The head of each filter, from a probe begun after the call (every event appended before the
   * call counts) or, with `maxAgeMs`, at most that long before it. Concurrent callers share a probe.
   */
  async of(filters: readonly StreamFilter[], maxAgeMs: number): Promise<Position[]> {
    if (filters.length === 0) return []
    const prefixes = [...new Set(filters.flatMap(prefixesOf))]
    const askedAt = this.now()
    const startedBefore = this.probesStarted
    const answered = () =>
      (this.probed.number > startedBefore || (maxAgeMs > 0 && this.probed.at >= askedAt - maxAgeMs)) && prefixes.every((prefix) => this.heads.has(prefix))
    while (!answered()) {
      this.probing ??= this.probe(prefixes.filter((prefix) => !this.heads.has(prefix))).finally(() => {
        this.probing = undefined
      })
      await this.probing
    }
    return headsOfFilters(filters, this.heads)
  }

  private async probe(untracked: readonly string[]): Promise<void> {
    const started = { number: ++this.probesStarted, at: this.now() }
    const known = [...this.heads.keys()]
    const found = new Map<string, Position>()
    const unfound = new Set(untracked)
    let newest: Position | undefined
    for await (const { stream, position } of this.newestFirst()) {
      newest ??= position
      const counted = this.readThrough !== undefined && comparePositions(position, this.readThrough) <= 0
      if (counted && unfound.size === 0) break
      for (const prefix of counted ? unfound : [...known, ...unfound]) {
        if (found.has(prefix) || !stream.startsWith(prefix)) continue
        found.set(prefix, position)
        unfound.delete(prefix)
      }
      if (unfound.size === 0 && known.every((prefix) => found.has(prefix))) break
    }
    for (const prefix of unfound) found.set(prefix, START)
    for (const [prefix, head] of found) if (newer(head, this.heads.get(prefix))) this.heads.set(prefix, head)
    if (newest && newer(newest, this.readThrough)) this.readThrough = newest
    if (started.number > this.probed.number) this.probed = started
  }
}
