import { fork, spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { onCleanup } from './cleanup.js'
import { cliPath } from './env.js'

const START_TIMEOUT_MS = 60_000
const STOP_TIMEOUT_MS = 20_000

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

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

/** The heap cap the image sets for every flowd process (Dockerfile, NODE_OPTIONS), in MiB. */
export const DEPLOYED_MAX_OLD_SPACE_MIB = 384

/** The child's environment: ours, without database or port settings it should not inherit, plus `env`. */
function serviceEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const { DATABASE_URL: _d, EVENT_STORE: _e, EVENTSTORE_CONNECTION_STRING: _c, PORT: _p, DATA_DIR: _dd, NODE_OPTIONS: _n, ...rest } = process.env
  // Benchmarks measure throughput through one key: the per-key rate limit would measure itself.
  return { ...rest, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0', AUTH_RATE_LIMIT_PER_MINUTE: '0', ...env }
}

/** Last `limit` characters of a stream, for error messages. */
function tail(child: ChildProcess, limit = 20_000): () => string {
  let text = ''
  const add = (chunk: string) => {
    text = (text + chunk).slice(-limit)
  }
  child.stdout?.setEncoding('utf8').on('data', add)
  child.stderr?.setEncoding('utf8').on('data', add)
  return () => text
}

const exitOf = (child: ChildProcess) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve({ code: child.exitCode, signal: child.signalCode })
    else child.once('exit', (code, signal) => resolve({ code, signal }))
  })

const alive = (child: ChildProcess) => child.exitCode === null && child.signalCode === null

async function killAndWait(child: ChildProcess, signal: NodeJS.Signals, timeoutMs: number): Promise<boolean> {
  if (!alive(child)) return true
  const exited = exitOf(child)
  child.kill(signal)
  return Promise.race([exited.then(() => true), sleep(timeoutMs).then(() => false)])
}

export interface Bootstrapped {
  apiKey: string
  workspaceId: string
}

/** `flowd bootstrap --json` against `databaseUrl` (migrates it too); an empty URL: the embedded database in `dataDir`. */
export async function bootstrap(databaseUrl: string, dataDir: string, organization = 'Bench'): Promise<Bootstrapped> {
  const child = spawn(process.execPath, [cliPath, 'bootstrap', '--organization', organization, '--workspace', 'Bench', '--json'], {
    env: serviceEnv({ DATABASE_URL: databaseUrl, DATA_DIR: dataDir }),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (stdout += c))
  const output = tail(child)
  const undo = onCleanup(`flowd bootstrap (${child.pid})`, () => killAndWait(child, 'SIGKILL', 5_000).then(() => {}))
  const exit = await exitOf(child)
  await undo()
  const line = stdout.split('\n').find((l) => l.startsWith('{'))
  if (exit.code !== 0 || !line) throw new Error(`flowd bootstrap failed (${exit.code ?? exit.signal}):\n${output()}`)
  const { apiKey, workspaceId } = JSON.parse(line) as Bootstrapped
  return { apiKey, workspaceId }
}

export interface ServiceOptions {
  /** Empty: the embedded database, in `dataDir`. */
  databaseUrl: string
  /** The service's DATA_DIR (removed when it stops); a fresh temporary folder by default. */
  dataDir?: string
  env?: Record<string, string>
  /** Node options before the script, e.g. --cpu-prof. */
  nodeArgs?: string[]
}

export interface Service {
  pid: number
  base: string
  dataDir: string
  output(): string
  /** Peak resident set size of the service so far (VmHWM), in bytes; undefined where /proc is missing. */
  peakRssBytes(): number | undefined
  /** SIGTERM and wait for the exit (SIGKILL after 20 s); removes the data directory. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

/** `node dist/src/cli/main.js start` as a child on a free port, answering /healthz. */
export async function startService(options: ServiceOptions): Promise<Service> {
  if (!existsSync(cliPath)) throw new Error(`${cliPath} is missing: run 'npm run build' (npm run bench does)`)
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'flowd-bench-'))
  const port = await freePort()
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), cliPath, 'start'], {
    env: serviceEnv({ DATABASE_URL: options.databaseUrl, PORT: String(port), DATA_DIR: dataDir, ...options.env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const output = tail(child)
  const exited = exitOf(child)
  const stopNow = onCleanup(`flowd start (${child.pid})`, async () => {
    if (!(await killAndWait(child, 'SIGTERM', STOP_TIMEOUT_MS))) await killAndWait(child, 'SIGKILL', 5_000)
    rmSync(dataDir, { recursive: true, force: true })
  })
  const base = `http://127.0.0.1:${port}`
  const deadline = Date.now() + START_TIMEOUT_MS
  for (;;) {
    if (!alive(child)) {
      await stopNow()
      throw new Error(`flowd start exited (${child.exitCode ?? child.signalCode}):\n${output()}`)
    }
    const healthy = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2_000) }).then(
      async (r) => (await r.arrayBuffer(), r.ok),
      () => false,
    )
    if (healthy) break
    if (Date.now() > deadline) {
      await stopNow()
      throw new Error(`flowd start did not answer /healthz within ${START_TIMEOUT_MS} ms:\n${output()}`)
    }
    await sleep(100)
  }
  return {
    pid: child.pid!,
    base,
    dataDir,
    output,
    peakRssBytes: () => procStatusBytes(child.pid!, 'VmHWM'),
    async stop() {
      await stopNow()
      return exited
    },
  }
}

/** A `kB` field of /proc/<pid>/status in bytes. */
export function procStatusBytes(pid: number, field: 'VmHWM' | 'VmRSS'): number | undefined {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match ? Number(match[1]) * 1024 : undefined
  } catch {
    return undefined
  }
}

export interface RssSamples {
  /** Peak resident set size over the whole life of the process (VmHWM), in bytes, when sampling stopped. */
  peakBytes: number | undefined
  /** Largest VmRSS seen by the samples, in bytes, overall and in each named phase. */
  maxSampledBytes: number | undefined
  byPhase: Record<string, number>
  /** VmRSS in MiB, one sample each `everyMs`. */
  seriesMiB: number[]
  everyMs: number
}

/**
 * Samples a process's VmRSS every `everyMs` until `stop()`, which also reads its VmHWM: the one way
 * the benchmarks measure the service's memory (goal: peak RSS < 300 MiB). `phase(name)` labels the
 * samples that follow, so the peak of a phase (setup, warm-up, measured) can be told apart.
 */
export function sampleRss(pid: number, everyMs = 250): { phase(name: string): void; stop(): RssSamples } {
  const series: number[] = []
  const byPhase: Record<string, number> = {}
  let phase = 'start'
  let max: number | undefined
  let peak: number | undefined
  const take = () => {
    const rss = procStatusBytes(pid, 'VmRSS')
    peak = procStatusBytes(pid, 'VmHWM') ?? peak
    if (rss === undefined) return
    series.push(Math.round(rss / 2 ** 20))
    max = Math.max(max ?? 0, rss)
    byPhase[phase] = Math.max(byPhase[phase] ?? 0, rss)
  }
  take()
  const timer = setInterval(take, everyMs)
  timer.unref()
  return {
    phase(name) {
      take()
      phase = name
    },
    stop() {
      take()
      clearInterval(timer)
      return { peakBytes: peak, maxSampledBytes: max, byPhase, seriesMiB: series, everyMs }
    },
  }
}

/**
 * Runs a compiled benchmark program (bench/load/*) in a process of its own: sends it `input` over
 * IPC and resolves with the one message it answers. It is killed at cleanup if still running.
 * Progress the worker reports on the way (`progress` of `workerMain`) goes to `onProgress`.
 */
export async function runWorker<In, Out>(
  script: string,
  input: In,
  timeoutMs: number,
  execArgv: string[] = [],
  onProgress?: (progress: unknown) => void,
): Promise<Out> {
  const child = fork(script, [], { execArgv, stdio: ['ignore', 'pipe', 'pipe', 'ipc'], serialization: 'advanced' })
  const output = tail(child)
  const exited = exitOf(child)
  const kill = onCleanup(`worker ${script} (${child.pid})`, () => killAndWait(child, 'SIGKILL', 5_000).then(() => {}))
  try {
    const answer = new Promise<Out>((resolve, reject) => {
      child.on('message', (message) => {
        const m = message as { ok: true; result: Out } | { ok: false; error: string } | { progress: unknown }
        if ('progress' in m) onProgress?.(m.progress)
        else if (m.ok) resolve(m.result)
        else reject(new Error(`${script}: ${m.error}\n${output()}`))
      })
      void exited.then(({ code, signal }) => reject(new Error(`${script} exited (${code ?? signal}) without an answer:\n${output()}`)))
    })
    child.send(input as object)
    const result = await Promise.race([
      answer,
      sleep(timeoutMs).then(() => {
        throw new Error(`${script} gave no answer within ${timeoutMs} ms:\n${output()}`)
      }),
    ])
    const exit = await Promise.race([exited, sleep(10_000).then(() => undefined)])
    if (!exit) process.stderr.write(`bench: ${script} did not exit after answering; killing it\n`)
    return result
  } finally {
    await kill()
  }
}

/** In a worker: reads the input, runs `work`, answers, and exits. `progress` reaches runWorker's `onProgress`. */
export function workerMain<In, Out>(work: (input: In, progress: (progress: unknown) => void) => Promise<Out>): void {
  if (!process.send) {
    process.stderr.write('this program is started by the benchmark runner (npm run bench)\n')
    process.exitCode = 2
    return
  }
  process.once('message', (input) => {
    work(input as In, (progress) => process.send!({ progress })).then(
      (result) => process.send!({ ok: true, result }, () => process.disconnect()),
      (error: unknown) =>
        process.send!({ ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) }, () => {
          process.exitCode = 1
          process.disconnect()
        }),
    )
  })
}

/** Runs a command to its end, collecting its output. */
export async function run(file: string, args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs: number }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(file, args, { env: options.env ?? process.env, cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c))
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c))
  const kill = onCleanup(`${file} (${child.pid})`, () => killAndWait(child, 'SIGKILL', 5_000).then(() => {}))
  try {
    const exit = await Promise.race([exitOf(child), sleep(options.timeoutMs).then(() => undefined)])
    if (!exit) throw new Error(`${file} ${args.join(' ')} did not finish within ${options.timeoutMs} ms\n${stdout}\n${stderr}`)
    return { code: exit.code, stdout, stderr }
  } finally {
    await kill()
  }
}

const CLOCK_TICKS = 100

/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat; 0 where it is gone. */
export function processCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Fields after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS
  } catch {
    return 0
  }
}

/** CPU seconds used so far by every process of the given command name (e.g. all postgres backends). */
export function commandCpuSeconds(command: string): Map<number, number> {
  const result = new Map<number, number>()
  let pids: string[] = []
  try {
    pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p))
  } catch {
    return result
  }
  for (const pid of pids) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === command) result.set(Number(pid), processCpuSeconds(Number(pid)))
    } catch {
      // Gone meanwhile.
    }
  }
  return result
}

/** CPU seconds the processes of `command` used between two `commandCpuSeconds` readings (processes that ended meanwhile are missed). */
export function cpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0
  for (const [pid, seconds] of after) total += seconds - (before.get(pid) ?? 0)
  return total
}

/** Machine-wide CPU time from /proc/stat, in seconds: busy (all but idle and iowait) and total, over all cores. */
export function machineCpuSeconds(): { busy: number; total: number } {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number)
    const total = fields.reduce((a, b) => a + b, 0)
    const idle = (fields[3] ?? 0) + (fields[4] ?? 0)
    return { busy: (total - idle) / CLOCK_TICKS, total: total / CLOCK_TICKS }
  } catch {
    return { busy: Number.NaN, total: Number.NaN }
  }
}

export interface CpuWindow {
  /** Cores kept busy on average, machine-wide (everything running, not only the benchmark). */
  machineBusyCores: number
  /** Cores used on average by the given process, when one is given. */
  processCores?: number
  /** Cores used on average by postgres processes that lived through the window. */
  postgresCores: number
}

/** Starts a CPU measurement; `end()` gives the averages over the time between. */
export function cpuWindow(pid?: number): { end(): CpuWindow } {
  const started = performance.now()
  const machine0 = machineCpuSeconds()
  const process0 = pid === undefined ? 0 : processCpuSeconds(pid)
  const postgres0 = commandCpuSeconds('postgres')
  return {
    end() {
      const seconds = (performance.now() - started) / 1000
      const machine1 = machineCpuSeconds()
      const r2 = (v: number) => Math.round(v * 100) / 100
      return {
        machineBusyCores: r2((machine1.busy - machine0.busy) / seconds),
        ...(pid === undefined ? {} : { processCores: r2((processCpuSeconds(pid) - process0) / seconds) }),
        postgresCores: r2(cpuBetween(postgres0, commandCpuSeconds('postgres')) / seconds),
      }
    },
  }
}
