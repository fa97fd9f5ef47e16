import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Machine, Versions } from './env.js'
import { resultsDir } from './env.js'

export interface Goal {
  op: '>=' | '<'
  value: number
}

export interface Figure {
  /** Stable key, e.g. `ratio`. */
  key: string
  label: string
  value: number
  unit: string
  goal?: Goal
  /** Present when there is a goal. */
  pass?: boolean
}

export interface BenchResult {
  benchmark: string
  /** ISO 8601, when the benchmark started. */
  date: string
  durationSeconds: number
  machine: Machine
  versions: Versions
  settings: Record<string, unknown>
  figures: Figure[]
  /** Everything else measured: per-phase figures, plans, profiles. */
  details: Record<string, unknown>
  notes: string[]
}

export function figure(key: string, label: string, value: number, unit: string, goal?: Goal): Figure {
  const f: Figure = { key, label, value, unit }
  if (goal) {
    f.goal = goal
    f.pass = Number.isFinite(value) && (goal.op === '>=' ? value >= goal.value : value < goal.value)
  }
  return f
}

const format = (value: number) => (Number.isInteger(value) ? String(value) : Math.abs(value) >= 100 ? value.toFixed(0) : Math.abs(value) < 1 ? value.toFixed(3) : value.toFixed(2))

export const goalText = (goal: Goal | undefined, unit: string) => (goal ? `${goal.op === '>=' ? '≥' : '<'} ${String(goal.value)}${unit ? ` ${unit}` : ''}` : '')

/** The figures as an aligned table, each with its goal and verdict beside it. */
export function printResult(result: BenchResult): void {
  const rows = result.figures.map((f) => [f.label, `${format(f.value)} ${f.unit}`.trim(), f.goal ? `goal ${goalText(f.goal, f.unit)}` : '', f.goal ? (f.pass ? 'PASS' : 'FAIL') : ''])
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i]!.length)))
  process.stdout.write(`\n== ${result.benchmark} (${result.date}) ==\n`)
  for (const r of rows) process.stdout.write(`  ${r[0]!.padEnd(widths[0]!)}  ${r[1]!.padStart(widths[1]!)}  ${r[2]!.padEnd(widths[2]!)}  ${r[3]}\n`)
  for (const note of result.notes) process.stdout.write(`  note: ${note}\n`)
}

/** Writes bench/results/<benchmark>-<yyyy-mm-dd>.json (a later run the same day replaces it); returns the path. */
export function writeResult(result: BenchResult): string {
  mkdirSync(resultsDir, { recursive: true })
  const file = join(resultsDir, `${result.benchmark}-${result.date.slice(0, 10)}.json`)
  writeFileSync(file, `${JSON.stringify(result, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2)}\n`)
  return file
}

/** The newest result of each benchmark in bench/results. */
export function latestResults(): BenchResult[] {
  let files: string[] = []
  try {
    files = readdirSync(resultsDir).filter((f) => f.endsWith('.json'))
  } catch {
    return []
  }
  const newest = new Map<string, BenchResult>()
  for (const file of files) {
    const result = JSON.parse(readFileSync(join(resultsDir, file), 'utf8')) as BenchResult
    // Other records share the folder (the test suite's per-file times): they have no figures.
    if (!Array.isArray(result.figures)) continue
    const seen = newest.get(result.benchmark)
    if (!seen || seen.date < result.date) newest.set(result.benchmark, result)
  }
  return [...newest.values()].sort((a, b) => a.benchmark.localeCompare(b.benchmark))
}
