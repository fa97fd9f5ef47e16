import { Writable } from 'node:stream'
import { pino } from 'pino'
import type { Logger } from '../../src/logger.js'

/** A logger at `trace` that keeps every line it writes, for a test that reads what was logged. */
export function capturedLogs(): { logger: Logger; text(): string } {
  const lines: string[] = []
  const sink = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      lines.push(String(chunk))
      done()
    },
  })
  return { logger: pino({ level: 'trace' }, sink), text: () => lines.join('') }
}
