import { destination, pino, stdTimeFunctions, type Logger } from 'pino'
import type { LogLevel } from './config.js'

export type { Logger }

/** JSON logs to stdout (fd 1) or, for CLI commands that print data, stderr (fd 2). */
export const createLogger = (level: LogLevel, fd: 1 | 2 = 1): Logger =>
  pino({ level, base: { service: 'flowd' }, timestamp: stdTimeFunctions.isoTime }, destination({ fd, sync: fd === 2 }))
