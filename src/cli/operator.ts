import type { CommandContext } from '../commands/context.js'
import { openBackend, systemContext, type Backend } from '../composition.js'
import type { CliContext } from './main.js'

const CATCH_UP_MS = 10_000

/**
 * Runs an operator command: the backend with its read models started and caught up with the event
 * store (so a list shows what the service shows), and a command context acting as the operator.
 */
export async function asOperator<T>({ config, logger }: CliContext, run: (backend: Backend, ctx: CommandContext) => Promise<T>): Promise<T> {
  const backend = await openBackend(config, logger)
  try {
    await backend.readModels.start()
    const behind = (await backend.readModels.status(CATCH_UP_MS)).filter((s) => !s.caughtUp).map((s) => s.name)
    if (behind.length) process.stderr.write(`flowd: read models still catching up (${behind.join(', ')}); lists may miss the newest changes\n`)
    return await run(backend, systemContext(backend, logger))
  } finally {
    await backend.close()
  }
}

/** Prints rows as aligned columns under a header. */
export function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')
  process.stdout.write(`${[header, ...rows].map(line).join('\n')}\n`)
}

export const printJson = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value)}\n`)
}
