import type { VariableValue } from './turn.js'

/** Where `{{name}}` and `{{name.path}}` look values up: system variables shadow the conversation's. */
export interface Scope {
  system: Readonly<Record<string, VariableValue>>
  variables: Readonly<Record<string, VariableValue>>
}

export interface Interpolator {
  /** The template with each placeholder replaced; unknown ones render empty and are remembered. */
  text(template: string): string
  /** Paths of the unknown placeholders met so far, each once. */
  readonly unknown: ReadonlySet<string>
}

// Only well-formed names are placeholders; anything else between braces stays as written.
const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*\}\}/g

/** Whether interpolation can change the text: it holds a placeholder. */
export const hasPlaceholder = (template: string): boolean => template.search(PLACEHOLDER) >= 0

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null

// Own properties only, so `{{x.constructor}}` or `{{__proto__}}` never reach the prototype.
const child = (value: unknown, key: string): unknown => (isRecord(value) && Object.hasOwn(value, key) ? value[key] : undefined)

/** The value a variable name or dotted path points to, or undefined when there is none. */
export const lookup = (scope: Scope, path: string): unknown => {
  const [head = '', ...rest] = path.split('.')
  const root = Object.hasOwn(scope.system, head) ? scope.system[head] : child(scope.variables, head)
  return rest.reduce(child, root)
}

/** How a value reads inside text: strings as they are, objects as JSON, nothing as empty. */
export const render = (value: unknown): string => {
  if (value === undefined || value === null) return ''
  if (typeof value === 'string') return value
  if (typeof value === 'object') return JSON.stringify(value)
  return String(value)
}

/** The variable path a template is made of alone (`{{order.id}}`), or undefined when it holds more or less. */
export const wholePlaceholder = (template: string): string | undefined => {
  const match = /^\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*\}\}$/.exec(template)
  return match?.[1]
}

export interface InterpolationOptions {
  /** Applied to each variable's rendered value (a URL encodes it). */
  encode?: (value: string) => string
  /** What `{{secrets.NAME}}` becomes; without it, `secrets` is a variable name like any other. */
  secret?: (name: string) => string
  /** Applied to each variable's rendered value before `encode`. */
  clean?: (value: string) => string
}

export const interpolator = (scope: Scope, options: InterpolationOptions = {}): Interpolator => {
  const unknown = new Set<string>()
  const { encode = (value: string) => value, secret, clean = (value: string) => value } = options
  const text = (template: string): string =>
    template.replace(PLACEHOLDER, (_placeholder, path: string) => {
      if (secret && path.startsWith(SECRETS_PREFIX)) return secret(path.slice(SECRETS_PREFIX.length))
      const value = lookup(scope, path)
      if (value === undefined) unknown.add(path)
      return encode(clean(render(value)))
    })
  return { text, unknown }
}

/** Templates of an outgoing HTTP request read workspace secrets as `{{secrets.NAME}}`. */
export const SECRETS_PREFIX = 'secrets.'
