import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import os from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The project's root: the nearest folder above this file whose package.json is this project's. */
export const projectRoot: string = (() => {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const manifest = join(dir, 'package.json')
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'conversation-flow-service') return dir
    const parent = dirname(dir)
    if (parent === dir) throw new Error('bench: cannot find the project root (package.json of conversation-flow-service)')
    dir = parent
  }
})()

/**
 * The service, as `npm run build` compiles it; BENCH_FLOWD_CLI: another build's `dist/src/cli/main.js`
 * (a baseline to compare with, on the same databases and the same benchmark).
 */
export const cliPath = process.env.BENCH_FLOWD_CLI?.trim() || join(projectRoot, 'dist', 'src', 'cli', 'main.js')
/** Compiled benchmark programs (bench/tsconfig.json). */
export const benchDist = join(projectRoot, 'dist', 'bench', 'bench')
/** Where results go: bench/results, or BENCH_RESULTS_DIR for trial runs that must not replace the record. */
export const resultsDir = process.env.BENCH_RESULTS_DIR?.trim() || join(projectRoot, 'bench', 'results')
export const performanceDoc = join(projectRoot, 'docs', 'performance.md')

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test'
/** The server the benchmarks create their databases on (the database in the URL is only used to connect). */
export const adminDatabaseUrl = process.env.DATABASE_URL?.trim() || DEFAULT_DATABASE_URL

/** pgbench: PGBENCH, else the newest /usr/lib/postgresql/N/bin/pgbench, else the one on PATH. */
export const pgbenchPath: string = (() => {
  if (process.env.PGBENCH) return process.env.PGBENCH
  const base = '/usr/lib/postgresql'
  const versions = existsSync(base) ? readdirSync(base).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)) : []
  for (const v of versions) {
    const candidate = join(base, v, 'bin', 'pgbench')
    if (existsSync(candidate)) return candidate
  }
  return 'pgbench'
})()

const packageVersion = (name: string): string | undefined => {
  try {
    return (JSON.parse(readFileSync(join(projectRoot, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version
  } catch {
    return undefined
  }
}

const commandOutput = (file: string, args: string[]): string | undefined => {
  try {
    return execFileSync(file, args, { cwd: projectRoot, stdio: ['ignore', 'pipe', 'ignore'], encoding: 'utf8' }).trim()
  } catch {
    return undefined
  }
}

export interface Machine {
  os: string
  cpuModel: string
  cpuCount: number
  memoryGiB: number
  /** 1, 5 and 15 minute load averages when the benchmark started and ended: other work on the machine shows here. */
  loadAverageAtStart: number[]
  loadAverageAtEnd?: number[]
}

export function machine(): Machine {
  const cpus = os.cpus()
  return {
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cpuCount: cpus.length,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    loadAverageAtStart: os.loadavg().map((l) => Math.round(l * 100) / 100),
  }
}

export const loadAverage = () => os.loadavg().map((l) => Math.round(l * 100) / 100)

export interface Versions {
  node: string
  postgres?: string
  pgbench?: string
  flowd: string
  /** `git describe --always --dirty` of the work tree measured. */
  commit?: string
  [tool: string]: string | undefined
}

export function versions(postgres: string | undefined, tools: string[] = []): Versions {
  const manifest = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version: string }
  const result: Versions = {
    node: process.version,
    postgres,
    flowd: manifest.version,
    commit: commandOutput('git', ['describe', '--always', '--dirty']),
  }
  for (const tool of tools) {
    if (tool === 'pgbench') result.pgbench = commandOutput(pgbenchPath, ['--version'])
    else result[tool] = packageVersion(tool)
  }
  return result
}
