// Everything a benchmark starts (child processes, databases) registers its undoing here, so that an
// error, Ctrl-C or SIGTERM still leaves no process and no flowd_bench_* database behind.

type Undo = () => Promise<void> | void

const undos = new Map<number, { what: string; undo: Undo }>()
let next = 0

/** Registers `undo`; the returned function runs it once and forgets it. */
export function onCleanup(what: string, undo: Undo): () => Promise<void> {
  const id = next++
  undos.set(id, { what, undo })
  return async () => {
    const entry = undos.get(id)
    if (!entry) return
    undos.delete(id)
    await entry.undo()
  }
}

/** Runs every registered undo, newest first (processes before the databases they use). */
export async function cleanupAll(): Promise<void> {
  const entries = [...undos.entries()].sort(([a], [b]) => b - a)
  undos.clear()
  for (const [, { what, undo }] of entries) {
    try {
      await undo()
    } catch (error) {
      process.stderr.write(`bench: cleanup of ${what} failed: ${error instanceof Error ? error.message : String(error)}\n`)
    }
  }
}

let installed = false

/** On SIGINT/SIGTERM: clean up, then exit 130/143. */
export function installSignalCleanup(): void {
  if (installed) return
  installed = true
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    process.once(signal, () => {
      process.stderr.write(`\nbench: ${signal}, cleaning up\n`)
      void cleanupAll().finally(() => process.exit(code))
    })
  }
}
