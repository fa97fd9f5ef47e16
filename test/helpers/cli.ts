import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'
import type { Storage } from '../../src/store/connect.js'
import { assertionMessage } from './assertion-message.js'
import { testEveryBackend } from './test-scope.js'

/** The built CLI: `npm test` builds before tap runs. */
export const cliPath = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url))

/**
 * Node flags of the short CLI commands tests run (`runCli`). `--liftoff-only`: a command on the
 * embedded database spends seconds of CPU having V8 optimise PGlite's WebAssembly, which it exits
 * before using, and its exit waits for that compilation to end; V8's baseline compiler runs the
 * same code. Services started by tests keep V8's defaults, as deployed.
 */
export const cliNodeArgs = ['--liftoff-only']

/**
 * A `flowd start` process of every role then opens at most 27 connections (src/connection-budget.ts),
 * against 54 by default; `flowd projections rebuild` builds with 6 beside its reads.
 */
const SMALL_POOLS = { API_POOL_SIZE: '4', ENGINE_POOL_SIZE: '4', PROJECTOR_POOL_SIZE: '6', DISPATCHER_POOL_SIZE: '4' }

/**
 * Smaller pools still, for a file that runs a rebuild, alone or beside a service: with the files
 * running at the same time, the rebuild's connections must fit under the server's max_connections.
 */
export const REBUILD_POOLS = { API_POOL_SIZE: '2', ENGINE_POOL_SIZE: '2', PROJECTOR_POOL_SIZE: '3', DISPATCHER_POOL_SIZE: '2' }

/**
 * Environment for a child: no inherited database settings unless given, and no coverage. Coverage
 * is measured in the test processes, which run the sources themselves; a child runs the build, and
 * instrumenting every service and command a test starts would only add CPU.
 */
let ownDataDir: string | undefined
/**
 * The DATA_DIR of children given none: a folder of this test process, so that no child writes into
 * the checkout's `./.data` (every process that opens the backend keeps the secrets' master key there).
 */
const defaultDataDir = (): string => {
  if (!ownDataDir) {
    const dir = (ownDataDir = mkdtempSync(join(tmpdir(), 'flowd-test-data-')))
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
  }
  return ownDataDir
}

const dependencyBundles = new URL('../loader/dependency-bundles.mjs', import.meta.url).href

export const childEnv = (env: Record<string, string | undefined>): NodeJS.ProcessEnv => {
  const { DATABASE_URL: _d, EVENT_STORE: _e, EVENTSTORE_CONNECTION_STRING: _c, PORT: _p, DATA_DIR: _dd, NODE_OPTIONS: nodeOptions, ...rest } = process.env
  // tap follows every process its tests start by an import in NODE_OPTIONS (@tapjs/processinfo),
  // which hooks each module the child loads. Children are not covered (their tests' processes
  // are), so they start without it: a quarter of a second of CPU less for each command or service.
  // They load the dependencies bundled, as the test processes do (test/loader/dependency-bundles.mjs).
  rest.NODE_OPTIONS = [withoutTapProcessInfo(nodeOptions), `--import=${dependencyBundles}`].filter(Boolean).join(' ')
  rest._TAPJS_PROCESSINFO_COVERAGE_ = '0'
  // Fault tests send bursts through one key; rate limits have their own tests (test/http/rate-limit.test.ts).
  // Small pools: tap's parallel files share the server's max_connections (shareServer in storage.ts).
  return { ...rest, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0', AUTH_RATE_LIMIT_PER_MINUTE: '0', ...SMALL_POOLS, DATA_DIR: defaultDataDir(), ...env }
}

function withoutTapProcessInfo(nodeOptions: string | undefined): string {
  return (nodeOptions ?? '').split(/\s+/).filter((option) => option && !option.includes('@tapjs/processinfo')).join(' ')
}

export function tempDir(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'flowd-test-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

/** What `child` printed and its exit code once it closes; killed, and refused, after `timeoutMs`. */
function outputOf(child: ChildProcess, what: string, timeoutMs: number): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    let stdout = ''
    let stderr = ''
    child.stdout!.on('data', (chunk) => (stdout += chunk))
    child.stderr!.on('data', (chunk) => (stderr += chunk))
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`${what} did not finish in ${timeoutMs} ms\n${stdout}\n${stderr}`))
    }, timeoutMs)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

export function runCli(args: string[], env: Record<string, string | undefined>, timeoutMs = 60_000): Promise<CliResult> {
  const child = spawn(process.execPath, [...cliNodeArgs, cliPath, ...args], { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] })
  return outputOf(child, `flowd ${args.join(' ')}`, timeoutMs)
}

const oneProcessDriver = fileURLToPath(new URL('./cli-one-process.mjs', import.meta.url))

/**
 * Runs `flowd` once for each invocation, all in one process of the built CLI: each is its main()
 * called with its arguments and environment, with its own stdout, stderr and exit code (the number
 * main() returns, which a process of its own exits with). A process loads the CLI's modules for
 * half a second of CPU; here they are loaded once for every invocation. For what ends before a
 * store is opened (usage errors, help): logs written by a store's code would not be told apart.
 */
export async function runCliInOneProcess(invocations: { args: string[]; env?: Record<string, string | undefined> }[], timeoutMs = 60_000): Promise<CliResult[]> {
  const child = spawn(process.execPath, [...cliNodeArgs, oneProcessDriver], { env: childEnv({}), stdio: ['pipe', 'pipe', 'pipe'] })
  child.stdin!.end(JSON.stringify([cliPath, invocations.map(({ args, env = {} }) => ({ args, env: childEnv(env) }))]))
  const what = `flowd ${invocations.map(({ args }) => args.join(' ')).join('; ')}`
  const { code, stdout, stderr } = await outputOf(child, what, timeoutMs)
  if (code !== 0) throw new Error(`the process running ${what} exited with ${code}\n${stdout}\n${stderr}`)
  return JSON.parse(stdout) as CliResult[]
}

export interface ServiceProcess {
  child: ChildProcess
  baseUrl: string
  /** Everything printed on stdout so far. */
  output(): string
  /** SIGTERM, then waits for the exit code. */
  stop(): Promise<number | null>
}

/** How long a service may take to exit after SIGTERM: its shutdown drains work in flight, then closes the store. */
const STOP_TIMEOUT_MS = 30_000

/** Starts `flowd start` and waits until /healthz answers. Killed at teardown if still running. */
export async function startService(t: Test, env: Record<string, string | undefined>, timeoutMs = 60_000): Promise<ServiceProcess> {
  const port = await freePort()
  const child = spawn(process.execPath, [cliPath, 'start'], { env: childEnv({ ...env, PORT: String(port) }), stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (chunk) => (stdout += chunk))
  child.stderr!.on('data', (chunk) => (stderr += chunk))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  const baseUrl = `http://127.0.0.1:${port}`
  const deadline = Date.now() + timeoutMs
  // tap reports only the first line of the error: what the child printed goes to the log beside it.
  const failed = (why: string) => {
    t.comment(assertionMessage(`${why}; it printed:\n${stdout}\n${stderr}`, { keepLineBreaks: true, maxLength: 8000 }))
    return new Error(`${why}\n${stdout}\n${stderr}`)
  }
  for (;;) {
    if (child.exitCode !== null) throw failed(`flowd start exited with ${child.exitCode}`)
    if (Date.now() > deadline) throw failed(`flowd start did not become healthy in ${timeoutMs} ms`)
    const healthy = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(2_000) }).then((r) => r.ok, () => false)
    if (healthy && stdout.includes('Conversation Flow Service is running')) break
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return {
    child,
    baseUrl,
    output: () => stdout,
    async stop() {
      child.kill('SIGTERM')
      // A shutdown that hangs fails here with what the service printed, not at the file's timeout.
      const timedOut = new Promise<'timeout'>((resolve) => setTimeout(resolve, STOP_TIMEOUT_MS, 'timeout').unref())
      const outcome = await Promise.race([exited, timedOut])
      if (outcome === 'timeout') throw failed(`flowd start did not exit within ${STOP_TIMEOUT_MS} ms of SIGTERM`)
      return outcome
    },
  }
}

export type CliStoreName = 'pglite' | 'postgres'

/**
 * The stores a file runs its commands on when the store is not what it tests: Postgres where
 * DATABASE_URL is set (a command there costs about half the CPU of one that opens the embedded
 * database, and a service less still), the embedded store otherwise; both with TEST_EVERY_BACKEND=1.
 * What only the embedded store does (a first start on an empty DATA_DIR, its lock, the default key)
 * is tested on it by name.
 */
export const cliStoreNames: readonly CliStoreName[] = process.env.DATABASE_URL ? (testEveryBackend ? ['postgres', 'pglite'] : ['postgres']) : ['pglite']

export interface CliStore {
  name: CliStoreName
  /**
   * The environment of commands and services on it. DATA_DIR is the test's own on Postgres too:
   * the secrets' master key and the dev receiver's certificate are kept there.
   */
  env: { DATA_DIR: string; DATABASE_URL?: string }
  /** The store, opened in the test's process. On PGlite close it before a command runs: the embedded database is one process's at a time. */
  open(): Promise<Storage>
}

/** A migrated, empty store of this test alone (see {@link cliStoreNames}), removed at teardown. */
export async function cliStore(t: Test, name: CliStoreName = cliStoreNames[0]!): Promise<CliStore> {
  // Imported here, not above: most files that start commands never open a store themselves. The
  // storage helper first, which refuses to go on without DATABASE_URL under REQUIRE_POSTGRES=1.
  const { createTestDatabase } = await import('./storage.js')
  const { openStorage } = await import('../../src/store/connect.js')
  if (name === 'pglite') {
    const { migratedDataDir } = await import('./pglite-template.js')
    const dataDir = await migratedDataDir(t)
    return { name, env: { DATA_DIR: dataDir }, open: () => openStorage({ kind: 'pglite', dataDir: join(dataDir, 'pglite') }) }
  }
  const database = await createTestDatabase()
  t.teardown(() => database.drop())
  return {
    name,
    env: { DATA_DIR: tempDir(t), DATABASE_URL: database.url },
    open: () => openStorage({ kind: 'postgres', url: database.url, poolSize: 8, projectorPoolSize: 4, dispatcherPoolSize: 2 }),
  }
}
