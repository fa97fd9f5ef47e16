/**
 * The JSONPath a flow reads a response with: a small subset, enough to pick one value. `$` is the
 * whole document; `.name` a member (letters, digits, `_` and `-`, not starting with a digit);
 * `['any name']` or `["any name"]` a member of any name; `[n]` the n-th item of an array, from 0.
 * `$.order.status`, `$.items[0].name`, `$['content-type']`. No wildcards, filters or slices: a path
 * names exactly one place or none.
 */

export type PathSegment = string | number

export const MAX_PATH_LENGTH = 200

const SEGMENT = /^(?:\.([A-Za-z_][A-Za-z0-9_-]*)|\[(\d{1,9})\]|\['((?:[^'\\]|\\.)*)'\]|\["((?:[^"\\]|\\.)*)"\])/

const unescape = (quoted: string): string => quoted.replace(/\\(.)/g, '$1')

/** The path's segments, or a sentence saying why it is not one of the supported paths. */
export function parseJsonPath(path: string): PathSegment[] | string {
  if (path.length > MAX_PATH_LENGTH) return `a path has at most ${MAX_PATH_LENGTH} characters`
  if (!path.startsWith('$')) return 'a path starts with $ (the whole response), as in $.order.status'
  const segments: PathSegment[] = []
  for (let rest = path.slice(1); rest.length > 0; ) {
    const match = SEGMENT.exec(rest)
    if (!match) return `"${rest}" is not a member (.name or ['name']) or an item ([0])`
    const [whole, name, index, single, double] = match
    segments.push(index !== undefined ? Number(index) : (name ?? unescape(single ?? double ?? '')))
    rest = rest.slice(whole.length)
  }
  return segments
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/** The value at the path, or undefined when the document has nothing there. Own members only. */
export function readJsonPath(document: unknown, segments: readonly PathSegment[]): unknown {
  let value: unknown = document
  for (const segment of segments) {
    if (typeof segment === 'number') value = Array.isArray(value) && segment < value.length ? value[segment] : undefined
    else value = isRecord(value) && Object.hasOwn(value, segment) ? value[segment] : undefined
    if (value === undefined) return undefined
  }
  return value
}
