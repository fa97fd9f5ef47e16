/**
 * Commands on one stream run one at a time within this process, so concurrent requests for one
 * session queue instead of failing each other's expected-revision checks. Across processes the
 * expected revision still decides.
 */
const tails = new Map<string, Promise<unknown>>()

export async function withStreamLock<T>(stream: string, work: () => Promise<T>): Promise<T> {
  const previous = tails.get(stream) ?? Promise.resolve()
  const run = previous.then(work, work)
  const tail = run.catch(() => {})
  tails.set(stream, tail)
  try {
    return await run
  } finally {
    if (tails.get(stream) === tail) tails.delete(stream)
  }
}
