/**
 * Group commit: appends that arrive while a write is running wait for it and then go together as
 * the next write, one statement and one commit for all of them. An append arriving when nothing
 * runs is written at once, so a lone request is never held back; under load the groups grow by
 * themselves, as many appends as arrived during one round trip.
 *
 * Appends to one stream never share a group: the later waits for the next, so each is decided on
 * the revision the earlier left (and the store answers each on its own expected revision).
 */
export interface GroupedAppend {
  stream: string
}

/** Writes a group; one answer per append, in order: its result, or the error that is its alone. */
export type GroupWriter<Append extends GroupedAppend, Result> = (appends: Append[]) => Promise<(Result | Error)[]>

interface Waiting<Append, Result> {
  append: Append
  resolve(result: Result): void
  reject(error: unknown): void
}

export class GroupCommit<Append extends GroupedAppend, Result> {
  private waiting: Waiting<Append, Result>[] = []
  private writing = false

  private readonly write: GroupWriter<Append, Result>
  private readonly maxGroup: number

  constructor(
    write: GroupWriter<Append, Result>,
    maxGroup = 256,
  ) {
    this.write = write
    this.maxGroup = maxGroup
  }

  submit(append: Append): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      this.waiting.push({ append, resolve, reject })
      if (!this.writing) void this.writeWhileWaiting()
    })
  }

  private async writeWhileWaiting(): Promise<void> {
    this.writing = true
    try {
      while (this.waiting.length > 0) {
        const group = this.takeGroup()
        let answers: (Result | Error)[]
        try {
          answers = await this.write(group.map((w) => w.append))
        } catch (error) {
          for (const w of group) w.reject(error)
          continue
        }
        group.forEach((w, index) => {
          const answer = answers[index]
          if (answer instanceof Error) w.reject(answer)
          else w.resolve(answer as Result)
        })
      }
    } finally {
      this.writing = false
    }
  }

  /** The oldest waiting appends, at most one per stream and `maxGroup` in all; the rest keep their order. */
  private takeGroup(): Waiting<Append, Result>[] {
    const group: Waiting<Append, Result>[] = []
    const left: Waiting<Append, Result>[] = []
    const streams = new Set<string>()
    for (const w of this.waiting) {
      if (group.length < this.maxGroup && !streams.has(w.append.stream)) {
        streams.add(w.append.stream)
        group.push(w)
      } else {
        left.push(w)
      }
    }
    this.waiting = left
    return group
  }
}
