import { execFileSync, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'
import { freePort } from './cli.js'

// A Postgres cluster of the test's own, for fault tests that stop and start the server. The shared
// server on DATABASE_URL is never touched: other test files and people use it.

const INSTALLS = '/usr/lib/postgresql'
const COMMAND_TIMEOUT_MS = 30_000
/** Beside the PGlite template (test/helpers/pglite-template.ts). */
const CACHE_ROOT = fileURLToPath(new URL('../../node_modules/.cache/flowd-test/', import.meta.url))
/** --no-sync and fsync=off at start: the files are thrown away; an immediate stop is still a crash to the server. */
const INITDB_ARGS = ['-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions']

export type StopMode = 'immediate' | 'fast'

export interface PrivatePostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`, trust authentication. */
  url: string
  port: number
  /** Starts the server and waits until it accepts connections. */
  start(): Promise<void>
  /** `immediate` is a crash as clients see it: no goodbye, crash recovery at the next start. */
  stop(options?: { mode?: StopMode }): Promise<void>
  restart(options?: { mode?: StopMode; pauseMs?: number }): Promise<void>
  /** Stops the server (if running) and removes its files. */
  destroy(): Promise<void>
  /** The server's log so far, for diagnostics. */
  log(): string
}

export type PrivatePostgresOutcome = { cluster: PrivatePostgres } | { skip: string }

/** The newest installed server's `bin` that has both initdb and pg_ctl. */
function findBinaries(): string | undefined {
  if (!existsSync(INSTALLS)) return undefined
  const versions = readdirSync(INSTALLS)
    .filter((name) => /^\d+(\.\d+)?$/.test(name))
    .sort((a, b) => Number(b) - Number(a))
  return versions.map((v) => join(INSTALLS, v, 'bin')).find((bin) => existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'pg_ctl')))
}

interface RunAs {
  /** How to run a server binary: directly, or through runuser when we are root (initdb refuses root). */
  command(binary: string, args: string[]): [string, string[]]
  uid: number
  gid: number
}

function runAs(): RunAs | string {
  const uid = process.getuid?.()
  if (uid === undefined) return 'no POSIX user ids on this platform'
  if (uid !== 0) return { command: (binary, args) => [binary, args], uid, gid: process.getgid!() }
  try {
    const ids = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { stdio: 'pipe' }).toString().trim())
    const postgresUid = ids('-u')
    const postgresGid = ids('-g')
    execFileSync('runuser', ['-u', 'postgres', '--', 'true'], { stdio: 'pipe' })
    return { command: (binary, args) => ['runuser', ['-u', 'postgres', '--', binary, ...args]], uid: postgresUid, gid: postgresGid }
  } catch (error) {
    return `running as root, and the server cannot be run as the 'postgres' user through runuser: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`
  }
}

/** Runs a server binary to its exit (not its children's: pg_ctl leaves the postmaster running). */
function run(as: RunAs, binary: string, args: string[]): Promise<void> {
  const [command, argv] = as.command(binary, args)
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (chunk) => (output += chunk))
    child.stderr.on('data', (chunk) => (output += chunk))
    const timer = setTimeout(() => child.kill('SIGKILL'), COMMAND_TIMEOUT_MS)
    child.once('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      if (code === 0) resolve()
      else reject(new Error(`${binary} ${args.join(' ')} failed (${code ?? signal}): ${output.trim()}`))
    })
  })
}

/**
 * A data directory as initdb leaves it, owned by the user the server runs as: initdb takes about a
 * second of CPU, a copy of its result a tenth of that. Made by the first process to need it, once
 * per server install and user.
 */
async function initializedDataDir(as: RunAs, bin: string): Promise<string> {
  const key = createHash('sha256').update(bin).update(readFileSync(join(bin, 'initdb'))).update(INITDB_ARGS.join(' ')).update(`${as.uid}:${as.gid}`).digest('hex').slice(0, 16)
  const made = join(CACHE_ROOT, `postgres-data-${key}`)
  if (existsSync(join(made, 'PG_VERSION'))) return made
  mkdirSync(CACHE_ROOT, { recursive: true })
  const building = mkdtempSync(join(CACHE_ROOT, 'building-postgres-'))
  try {
    chownSync(building, as.uid, as.gid)
    await run(as, join(bin, 'initdb'), ['-D', join(building, 'data'), ...INITDB_ARGS])
    try {
      renameSync(join(building, 'data'), made)
    } catch (error) {
      // Another test process made it first: theirs is the same.
      if (!existsSync(join(made, 'PG_VERSION'))) throw error
    }
    return made
  } finally {
    rmSync(building, { recursive: true, force: true })
  }
}

/**
 * Starts a fresh cluster (a copy of an initdb'd data directory) in a temporary directory on a free
 * port of 127.0.0.1, destroyed at the test's teardown. Answers `{ skip }` with the reason when this
 * machine cannot run one (no server binaries, root without a usable `postgres` user, initdb failing).
 */
export async function startPrivatePostgres(t: Test): Promise<PrivatePostgresOutcome> {
  const bin = findBinaries()
  if (!bin) return { skip: `no Postgres server binaries (initdb, pg_ctl) under ${INSTALLS}` }
  const as = runAs()
  if (typeof as === 'string') return { skip: as }

  const dir = mkdtempSync(join(tmpdir(), 'flowd-pg-'))
  const dataDir = join(dir, 'data')
  const logFile = join(dir, 'server.log')
  let running = false
  let destroyed = false
  const destroy = async () => {
    if (destroyed) return
    destroyed = true
    if (running) await run(as, join(bin, 'pg_ctl'), ['-D', dataDir, '-m', 'immediate', '-w', 'stop']).catch(() => {})
    running = false
    rmSync(dir, { recursive: true, force: true })
  }
  t.teardown(destroy)
  chownSync(dir, as.uid, as.gid)

  try {
    // Copied by the server's user, keeping the owner and the modes the server insists on.
    await run(as, 'cp', ['-a', await initializedDataDir(as, bin), dataDir])
  } catch (error) {
    await destroy()
    return { skip: `no data directory (initdb, or its copy, failed): ${error instanceof Error ? error.message : String(error)}` }
  }

  const port = await freePort()
  const options = ['-c listen_addresses=127.0.0.1', `-c port=${port}`, `-c unix_socket_directories=${dir}`, '-c fsync=off', '-c full_page_writes=off', '-c max_connections=100'].join(' ')
  const cluster: PrivatePostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async start() {
      await run(as, join(bin, 'pg_ctl'), ['-D', dataDir, '-l', logFile, '-w', '-t', '30', '-o', options, 'start'])
      running = true
    },
    async stop({ mode = 'fast' } = {}) {
      await run(as, join(bin, 'pg_ctl'), ['-D', dataDir, '-m', mode, '-w', '-t', '30', 'stop'])
      running = false
    },
    async restart({ mode = 'fast', pauseMs = 0 } = {}) {
      await cluster.stop({ mode })
      await new Promise((resolve) => setTimeout(resolve, pauseMs))
      await cluster.start()
    },
    destroy,
    log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''),
  }
  try {
    await cluster.start()
  } catch (error) {
    const log = cluster.log()
    await destroy()
    return { skip: `the private Postgres did not start: ${error instanceof Error ? error.message : String(error)}\n${log}` }
  }
  return { cluster }
}
