import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pgbenchPath } from './env.js'
import { run } from './processes.js'
import { Samples, summarize, type LatencySummary } from './stats.js'

export interface PgbenchOptions {
  databaseUrl: string
  /** The custom script (pgbench's own language). */
  script: string
  clients: number
  threads: number
  durationSeconds: number
  /** simple, extended or prepared. */
  protocol: 'simple' | 'extended' | 'prepared'
  /** String variables (-D name=value), used in the script as :name. */
  variables?: Record<string, string>
}

export interface PgbenchResult {
  transactions: number
  failed: number
  /** pgbench's "tps = … (without initial connection time)". */
  tps: number
  /** Per transaction, from pgbench's -l log, in milliseconds. */
  latencyMs: LatencySummary
  command: string
}

/** Runs pgbench with `-n` (no vacuum of its own tables) and a per-transaction log for the percentiles. */
export async function runPgbench(options: PgbenchOptions): Promise<PgbenchResult> {
  const dir = mkdtempSync(join(tmpdir(), 'flowd-bench-pgbench-'))
  try {
    const scriptFile = join(dir, 'script.sql')
    writeFileSync(scriptFile, options.script)
    const args = [
      '-n',
      '-c', String(options.clients),
      '-j', String(options.threads),
      '-T', String(options.durationSeconds),
      '-M', options.protocol,
      '-f', scriptFile,
      '-l', '--log-prefix', join(dir, 'txlog'),
      ...Object.entries(options.variables ?? {}).flatMap(([name, value]) => ['-D', `${name}=${value}`]),
      options.databaseUrl,
    ]
    const { code, stdout, stderr } = await run(pgbenchPath, args, { timeoutMs: (options.durationSeconds + 60) * 1000 })
    if (code !== 0) throw new Error(`pgbench failed (${code}):\n${stdout}\n${stderr}`)
    const tps = Number(/tps = ([\d.]+) \(without initial connection time\)/.exec(stdout)?.[1])
    const transactions = Number(/number of transactions actually processed: (\d+)/.exec(stdout)?.[1])
    const failed = Number(/number of failed transactions: (\d+)/.exec(stdout)?.[1] ?? 0)
    if (!Number.isFinite(tps) || !Number.isFinite(transactions)) throw new Error(`cannot read pgbench's output:\n${stdout}`)
    // Log lines: client_id transaction_no time_us script_no time_epoch time_us_part
    const latencies = new Samples()
    for (const file of readdirSync(dir).filter((f) => f.startsWith('txlog'))) {
      for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) {
        const fields = line.split(' ')
        if (fields.length >= 3 && /^\d+$/.test(fields[2]!)) latencies.push(Number(fields[2]) / 1000)
      }
    }
    return { transactions, failed, tps, latencyMs: summarize(latencies.values()), command: `pgbench ${args.slice(0, args.indexOf('-l')).join(' ')} -l <log> ${Object.keys(options.variables ?? {}).map((n) => `-D ${n}=<sample>`).join(' ')} <database>`.replace(scriptFile, '<script>').replace(/\s+/g, ' ') }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
