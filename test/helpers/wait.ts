export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls `probe` until it answers something other than undefined; throws naming `what` after `timeoutMs`. */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 20_000): Promise<T> {
  const until = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await sleep(25)
  }
}
