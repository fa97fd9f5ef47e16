import { parseArgs, type ParseArgsConfig } from 'node:util'
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../errors.js'

/** Wrong arguments: the CLI prints the message and exits 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError'
}

/** The exit codes of every `flowd` command, listed in `flowd --help`; scripts rely on them. */
export const ExitCode = {
  ok: 0,
  /** Failed at run time: database unreachable, store locked, anything unexpected. */
  failed: 1,
  /** Unknown command or option, missing or malformed argument, refused input. */
  usage: 2,
  /** No such API key, workspace or delivery (or not one the operator's filters reach). */
  notFound: 3,
  /** The thing exists but its state refuses the action, e.g. retrying a delivery that is still queued. */
  refused: 4,
  /** `audit verify` found a recorded turn that the interpreter does not reproduce; `flows replay`, a session the draft would change. */
  diverged: 5,
} as const

/** node:util parseArgs reports unknown options, missing values and stray positionals with these codes. */
const isParseArgsError = (error: unknown): boolean => {
  const code = error instanceof TypeError ? (error as TypeError & { code?: unknown }).code : undefined
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_')
}

export function exitCodeOf(error: unknown): number {
  if (error instanceof UsageError || error instanceof BadRequestError || isParseArgsError(error)) return ExitCode.usage
  if (error instanceof NotFoundError) return ExitCode.notFound
  if (error instanceof ConflictError || error instanceof ForbiddenError) return ExitCode.refused
  return ExitCode.failed
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** An id argument: a malformed one is a usage error (2), not an unknown id (3). */
export function uuidArgument(value: string | undefined, what: string, help: string): string {
  if (value === undefined) throw new UsageError(`${what} is required\n\n${help}`)
  if (!uuidPattern.test(value)) throw new UsageError(`${what} must be a UUID, got '${value}'`)
  return value
}

export function positiveIntegerArgument(value: string, what: string, max: number): number {
  const n = Number(value)
  if (!/^\d+$/.test(value) || n < 1 || n > max) throw new UsageError(`${what} must be a whole number from 1 to ${max}, got '${value}'`)
  return n
}

type OptionsConfig = NonNullable<ParseArgsConfig['options']>
const helpOption = { help: { type: 'boolean', short: 'h' } } as const

/**
 * Parses `flowd NAME ACTION [ARGS…] [OPTIONS]` (unknown options are errors): the action, the
 * arguments after it and the option values. `--help` prints `help` and exits 0; no action prints
 * it and exits 2 (`{ exit }`).
 */
export function parseAction<const O extends OptionsConfig>(args: string[], options: O, help: string) {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, strict: true, options: { ...options, ...helpOption } })
  const [action, ...rest] = positionals
  // The values' type is resolved only where O is known; here they are just flags.
  const flags: Record<string, unknown> = values
  if (flags.help === true || !action) {
    process.stdout.write(`${help}\n`)
    return { exit: flags.help === true ? ExitCode.ok : ExitCode.usage }
  }
  return { action, rest, values }
}
