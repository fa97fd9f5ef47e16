// A strict reader of the Prometheus text exposition format (version 0.0.4), so the tests read
// /metrics the way a Prometheus server would and fail on any line it would not accept.

export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

export interface Exposition {
  /** Metric family name → its declared type. */
  types: Map<string, string>
  samples: Sample[]
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*'
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)(?: -?\\d+)?$`)
const LABEL = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\\\|\\"|\\n)*)"(,|$)/
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped'])

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {}
  let rest = text
  while (rest.length > 0) {
    const match = LABEL.exec(rest)
    if (!match) throw new Error(`bad labels in: ${line}`)
    const [whole, name, raw] = match as unknown as [string, string, string]
    if (name in labels) throw new Error(`label ${name} twice in: ${line}`)
    labels[name] = raw.replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c))
    rest = rest.slice(whole.length)
  }
  return labels
}

/** As Prometheus reads a value (Go's ParseFloat): infinities and NaN in any letter case (prom-client writes `Nan`). */
function parseValue(text: string, line: string): number {
  if (/^\+?inf(inity)?$/i.test(text)) return Infinity
  if (/^-inf(inity)?$/i.test(text)) return -Infinity
  if (/^nan$/i.test(text)) return NaN
  const value = Number(text)
  if (text === '' || Number.isNaN(value)) throw new Error(`bad value in: ${line}`)
  return value
}

/** The family a sample belongs to: histograms and summaries add suffixes to their family's name. */
function familyOf(name: string, types: Map<string, string>): string | undefined {
  if (types.has(name)) return name
  const base = name.replace(/_(bucket|sum|count)$/, '')
  const type = types.get(base)
  return type === 'histogram' || type === 'summary' ? base : undefined
}

export function parseExposition(text: string): Exposition {
  if (!text.endsWith('\n')) throw new Error('the exposition must end with a line break')
  const types = new Map<string, string>()
  const samples: Sample[] = []
  for (const line of text.slice(0, -1).split('\n')) {
    if (line === '') continue
    if (line.startsWith('#')) {
      const type = new RegExp(`^# TYPE (${NAME}) (\\w+)$`).exec(line)
      if (type) {
        const [, name, kind] = type as unknown as [string, string, string]
        if (!TYPES.has(kind)) throw new Error(`unknown type in: ${line}`)
        if (types.has(name)) throw new Error(`TYPE twice for ${name}`)
        types.set(name, kind)
      } else if (!new RegExp(`^# HELP ${NAME} `).test(line)) {
        throw new Error(`bad comment line: ${line}`)
      }
      continue
    }
    const match = SAMPLE.exec(line)
    if (!match) throw new Error(`bad sample line: ${line}`)
    const [, name, labels, value] = match as unknown as [string, string, string | undefined, string]
    if (!familyOf(name, types)) throw new Error(`sample before (or without) its TYPE: ${line}`)
    samples.push({ name, labels: labels ? parseLabels(labels, line) : {}, value: parseValue(value, line) })
  }
  return { types, samples }
}

/** The sum of the samples named `name` whose labels include every one of `labels`; 0 when none does. */
export function valueOf(exposition: Exposition, name: string, labels: Record<string, string> = {}): number {
  return exposition.samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0)
}

/** The label sets of the samples named `name`. */
export const labelSets = (exposition: Exposition, name: string): Record<string, string>[] =>
  exposition.samples.filter((s) => s.name === name).map((s) => s.labels)
