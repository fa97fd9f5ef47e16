import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'
import { assertionMessage } from './assertion-message.js'

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

export const childEnv = (env: Record<string, string | undefined>): NodeJS.ProcessEnv => {
  const { DATABASE_URL: _d, EVENT_STORE: _e, EVENTSTORE_CONNECTION_STRING: _c, PORT: _p, DATA_DIR: _dd, NODE_OPTIONS: nodeOptions, ...rest } = process.env
  // tap follows every process its tests start by an import in NODE_OPTIONS (@tapjs/processinfo),
  // which hooks each module the child loads. Children are not covered (their tests' processes
  // are), so they start without it: a quarter of a second of CPU less for each command or service.
  const kept = withoutTapProcessInfo(nodeOptions)
  if (kept) rest.NODE_OPTIONS = kept
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

export function runCli(args: string[], env: Record<string, string | undefined>, timeoutMs = 60_000): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...cliNodeArgs, cliPath, ...args], { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`flowd ${args.join(' ')} did not finish in ${timeoutMs} ms\n${stdout}\n${stderr}`))
    }, timeoutMs)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

export interface ServiceProcess {
  child: ChildProcess
  baseUrl: string
  /** Everything printed on stdout so far. */
  output(): string
  /** SIGTERM, then waits for the exit code. */
  stop(): Promise<number | null>
}

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
    const healthy = await fetch(`${baseUrl}/healthz`).then((r) => r.ok, () => false)
    if (healthy && stdout.includes('Conversation Flow Service is running')) break
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return {
    child,
    baseUrl,
    output: () => stdout,
    async stop() {
      child.kill('SIGTERM')
      return exited
    },
  }
}
