// Summarises a V8 .cpuprofile (node --cpu-prof): self time per function and per place (a package
// in node_modules, a folder of src, node's internals, the garbage collector, idle).
//
//   node dist/bench/bench/tools/cpuprofile.js FILE.cpuprofile [TOP]

import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}

interface Profile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
  startTime: number
  endTime: number
}

export interface ProfileSummary {
  totalMs: number
  /** Self time by place, percent of all samples (idle included). */
  byPlace: { place: string; percent: number }[]
  /** Busiest functions by self time. */
  topFunctions: { fn: string; place: string; percent: number }[]
}

const placeOf = (url: string, functionName: string): string => {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)'
  const nodeModules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (nodeModules) return nodeModules[1]!
  if (url.startsWith('node:')) return 'node internals'
  const src = /\/dist\/(src\/[^/]+|migrations)\//.exec(url)
  if (src) return src[1]!
  return url.replace(/^file:\/\//, '')
}

export function summarizeProfile(file: string, top = 25): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const selfUs = new Map<number, number>()
  let total = 0
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0
    selfUs.set(id, (selfUs.get(id) ?? 0) + dt)
    total += dt
  })
  const byPlace = new Map<string, number>()
  const byFn = new Map<string, { place: string; us: number }>()
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame
    const place = placeOf(url, functionName)
    byPlace.set(place, (byPlace.get(place) ?? 0) + us)
    const fn = `${functionName || '(anonymous)'}${url ? ` ${url.replace(/^.*\/(node_modules|dist)\//, '$1/').replace(/^file:\/\//, '')}:${lineNumber + 1}` : ''}`
    const seen = byFn.get(fn)
    byFn.set(fn, { place, us: (seen?.us ?? 0) + us })
  }
  const pct = (us: number) => Math.round((us / total) * 1000) / 10
  return {
    totalMs: Math.round(total / 1000),
    byPlace: [...byPlace].sort((a, b) => b[1] - a[1]).map(([place, us]) => ({ place, percent: pct(us) })).filter((p) => p.percent >= 0.5),
    topFunctions: [...byFn]
      .sort((a, b) => b[1].us - a[1].us)
      .slice(0, top)
      .map(([fn, { place, us }]) => ({ fn, place, percent: pct(us) })),
  }
}

/**
 * The pipeline's stages, each known by the innermost frame of a sample that belongs to one: a
 * sample in kysely called from a read model is that read model's; one in fastify called from a
 * command is the command's. The database driver's own work (parsing answers as they arrive on the
 * socket) has no caller on its stack, so it is a stage of its own, shared by every query.
 */
const STAGES: [stage: string, test: (url: string) => boolean][] = [
  ['engine turn', (url) => /\/dist\/src\/engine\//.test(url)],
  ['read models (each below)', (url) => /\/dist\/src\/projections\//.test(url)],
  ['outbox', (url) => /\/dist\/src\/webhooks\/outbox\.js/.test(url)],
  ['webhook delivery (signing, TLS, HTTP)', (url) => /\/dist\/src\/webhooks\/|node_modules\/undici\//.test(url)],
  ['append (event store)', (url) => /\/dist\/src\/eventstore\//.test(url)],
  ['decision (commands, domain, event schemas)', (url) => /\/dist\/src\/(commands|domain)\//.test(url)],
  ['auth', (url) => /\/dist\/src\/(http\/auth|auth\/)/.test(url)],
  ['HTTP (fastify, routes, validation)', (url) => /\/dist\/src\/http\/|node_modules\/(fastify|@fastify|find-my-way|avvio|ajv|fast-json-stringify|light-my-request)\//.test(url)],
  ['database driver (pg), every query', (url) => /node_modules\/(pg|pg-protocol|pg-types|pg-pool|postgres-[a-z]+)\//.test(url)],
  ['logging (pino)', (url) => /node_modules\/(pino|sonic-boom|thread-stream)/.test(url)],
]

/** CPU µs per stage (and per read model) over the whole profile; the rest by V8's own names (GC, idle). */
export function stageTimes(file: string): { stages: Record<string, number>; readModels: Record<string, number> } {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  const stages: Record<string, number> = {}
  const readModels: Record<string, number> = {}
  profile.samples.forEach((leaf, i) => {
    const us = profile.timeDeltas[i] ?? 0
    let stage: string | undefined
    for (let id: number | undefined = leaf; id !== undefined && !stage; id = parent.get(id)) {
      const { url } = byId.get(id)!.callFrame
      stage = STAGES.find(([, test]) => test(url))?.[0]
      const readModel = stage === 'read models (each below)' ? /\/projections\/([a-z-]+)\.js/.exec(url)?.[1] : undefined
      if (readModel) readModels[readModel] = (readModels[readModel] ?? 0) + us
    }
    const { functionName } = byId.get(leaf)!.callFrame
    stage ??= functionName.startsWith('(') ? functionName : 'other (node internals, libraries called from no stage)'
    stages[stage] = (stages[stage] ?? 0) + us
  })
  return { stages, readModels }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [file, top] = process.argv.slice(2)
  if (!file) {
    process.stderr.write('usage: node dist/bench/bench/tools/cpuprofile.js FILE.cpuprofile [TOP]\n')
    process.exit(2)
  }
  const summary = summarizeProfile(file, Number(top ?? 25))
  process.stdout.write(`total ${summary.totalMs} ms sampled\n\nself time by place:\n`)
  for (const p of summary.byPlace) process.stdout.write(`  ${String(p.percent).padStart(5)}%  ${p.place}\n`)
  process.stdout.write('\nbusiest functions (self time):\n')
  for (const f of summary.topFunctions) process.stdout.write(`  ${String(f.percent).padStart(5)}%  ${f.fn}\n`)
}
