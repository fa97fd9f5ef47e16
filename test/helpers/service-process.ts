import { spawn, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import type { Test } from 'tap'
import type { DatabaseTarget } from '../../src/store/connect.js'
import { childEnv, cliPath, freePort, tempDir } from './cli.js'
import { migratedDataDir } from './pglite-template.js'
import { createTestDatabase, postgresUrl } from './storage.js'
import { sleep } from './wait.js'

// The compiled CLI as a child process, for fault tests that kill it: every wait is bounded, and a
// child still running at teardown is SIGKILLed.

// A first start on an empty data directory runs PGlite's initdb, several seconds on a slow machine.
export const START_TIMEOUT_MS = 30_000
export const EXIT_TIMEOUT_MS = 10_000

export type Exit = { code: number | null; signal: NodeJS.Signals | null }

export interface Proc {
  child: ChildProcess
  /** stdout and stderr interleaved, for diagnostics. */
  output(): string
  stdout(): string
  exited: Promise<Exit>
}

export interface Service extends Proc {
  base: string
}



/** Rejects with `message` when `ms` pass first. */
export function within<T>(promise: Promise<T>, ms: number, message: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${message()}`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/** Spawns the compiled CLI; the child is SIGKILLed at teardown if it is still running then. */
export function spawnCli(t: Test, args: string[], env: NodeJS.ProcessEnv): Proc {
  const child = spawn(process.execPath, [cliPath, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  let stdout = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk
    stdout += chunk
  })
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL')
      await within(exited, EXIT_TIMEOUT_MS, () => `child ${child.pid} did not exit after SIGKILL`).catch(() => {})
    }
  })
  return { child, output: () => output, stdout: () => stdout, exited }
}

export const running = (proc: Proc) => proc.child.exitCode === null && proc.child.signalCode === null

/** Polls `check` until it holds; fails early when the process dies. */
export async function until(proc: Proc, what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (!running(proc)) throw new Error(`the service exited (${proc.child.exitCode ?? proc.child.signalCode}) while waiting for ${what}; output:\n${proc.output()}`)
    if (await check().catch(() => false)) return
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; output:\n${proc.output()}`)
    await sleep(100)
  }
}

/** Whether GET `url` answers `status`. */
export const answers = async (url: string, status: number) => {
  const response = await fetch(url, { signal: AbortSignal.timeout(2_000) })
  await response.arrayBuffer()
  return response.status === status
}

/** `flowd start` on a free port, answering /healthz. */
export async function startService(t: Test, env: NodeJS.ProcessEnv): Promise<Service> {
  const port = await freePort()
  const proc = spawnCli(t, ['start'], { ...env, PORT: String(port) })
  const base = `http://127.0.0.1:${port}`
  await until(proc, 'GET /healthz to answer 200', START_TIMEOUT_MS, () => answers(`${base}/healthz`, 200))
  return { ...proc, base }
}

/** `flowd start --role <role>` on a free port, answering /healthz within `timeoutMs`. */
export async function startRole(t: Test, role: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Service> {
  const port = await freePort()
  const proc = spawnCli(t, ['start', '--role', role], { ...env, PORT: String(port) })
  const base = `http://127.0.0.1:${port}`
  await until(proc, `the ${role} process's GET /healthz to answer 200`, timeoutMs, () => answers(`${base}/healthz`, 200))
  return { ...proc, base }
}

/**
 * The log entries a process wrote with `message` (every entry without it), oldest first (its logs
 * are JSON lines on stdout at LOG_LEVEL=info). Complete lines only: the output read so far may end
 * in the middle of one.
 */
export function logEntries<Entry extends object>(proc: Proc, message?: string): Entry[] {
  return proc
    .stdout()
    .split('\n')
    .slice(0, -1)
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Entry & { msg?: string })
    .filter((entry) => message === undefined || entry.msg === message)
}

export async function stopGracefully(service: Service): Promise<Exit> {
  service.child.kill('SIGTERM')
  return within(service.exited, EXIT_TIMEOUT_MS, () => `no exit after SIGTERM; output:\n${service.output()}`)
}

export interface Setup {
  env: NodeJS.ProcessEnv
  target: DatabaseTarget
  /** The admin key: from the bootstrap command, or undefined to read it from the first start's banner. */
  apiKey: string | undefined
}

export interface StorageKind {
  name: 'embedded PGlite' | 'Postgres'
  /** Fresh storage of this kind, removed at teardown, and the child environment using it (plus `env`). */
  prepare(t: Test, env?: Record<string, string | undefined>): Promise<Setup>
}

/** An embedded PGlite data directory, migrated and empty; the first start bootstraps and prints the admin key. */
export const pgliteStorage: StorageKind = {
  name: 'embedded PGlite',
  async prepare(t, env = {}) {
    const dataDir = await migratedDataDir(t)
    return { env: childEnv({ ...env, DATA_DIR: dataDir }), target: { kind: 'pglite', dataDir: join(dataDir, 'pglite') }, apiKey: undefined }
  },
}

/** A database of its own on DATABASE_URL's server, bootstrapped with `flowd bootstrap --json`. */
export const postgresStorage: StorageKind = postgresStorageOn(undefined)

/** Like {@link postgresStorage}, on the server of `serverUrl` (undefined: DATABASE_URL's). */
export function postgresStorageOn(serverUrl: string | undefined): StorageKind {
  return { name: 'Postgres', prepare: (t, env) => preparePostgres(t, serverUrl, env) }
}

async function preparePostgres(t: Test, serverUrl: string | undefined, env: Record<string, string | undefined> = {}): Promise<Setup> {
  const dataDir = tempDir(t)
  const database = await createTestDatabase(serverUrl)
  // Registered before any child's, so it runs after their teardowns (tap runs them last-registered first).
  t.teardown(() => database.drop())
  const childEnvironment = childEnv({ ...env, DATA_DIR: dataDir, DATABASE_URL: database.url })
  const bootstrap = spawnCli(t, ['bootstrap', '--organization', 'O', '--workspace', 'W', '--json'], childEnvironment)
  const exit = await within(bootstrap.exited, START_TIMEOUT_MS, () => `bootstrap did not finish; output:\n${bootstrap.output()}`)
  if (exit.code !== 0) throw new Error(`bootstrap failed (${exit.code ?? exit.signal}); output:\n${bootstrap.output()}`)
  const line = bootstrap.stdout().split('\n').find((l) => l.startsWith('{'))
  const { apiKey } = JSON.parse(line ?? '{}') as { apiKey?: string }
  if (!apiKey?.startsWith('wh_')) throw new Error(`bootstrap printed no admin key; output:\n${bootstrap.output()}`)
  return { env: childEnvironment, target: { kind: 'postgres', url: database.url }, apiKey }
}

/** PGlite always; Postgres when DATABASE_URL is set. */
export const storageKinds: StorageKind[] = postgresUrl ? [pgliteStorage, postgresStorage] : [pgliteStorage]

/** The setup's admin key, or the one the first start of `service` printed in its banner. */
export async function adminKey(setup: Setup, service: Service): Promise<string> {
  if (setup.apiKey) return setup.apiKey
  await until(service, 'the admin key in the start banner', START_TIMEOUT_MS, async () => /X-Api-Key\s+wh_\S+/.test(service.stdout()))
  return /X-Api-Key\s+(wh_\S+)/.exec(service.stdout())![1]!
}
