/**
 * Differences between two JSON documents, by path: small enough to write here, and a path names
 * exactly what an auditor has to look at (`$.output.messages[0].text.body`).
 */

export type Difference =
  | { kind: 'changed'; path: string; left: unknown; right: unknown }
  | { kind: 'removed'; path: string; left: unknown }
  | { kind: 'added'; path: string; right: unknown }

type JsonObject = Record<string, unknown>

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value)

const keyPath = (path: string, key: string): string => (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`)

// As in JSON, a key holding undefined is a key that is absent.
const presentKeys = (value: JsonObject): string[] => Object.keys(value).filter((key) => value[key] !== undefined)

/** Every place where `right` differs from `left`, in document order; empty when they are equal as JSON. */
export function diffJson(left: unknown, right: unknown, path = '$'): Difference[] {
  if (Array.isArray(left) && Array.isArray(right)) {
    const differences: Difference[] = []
    for (let i = 0; i < Math.max(left.length, right.length); i++) {
      const at = `${path}[${i}]`
      if (i >= right.length) differences.push({ kind: 'removed', path: at, left: left[i] })
      else if (i >= left.length) differences.push({ kind: 'added', path: at, right: right[i] })
      else differences.push(...diffJson(left[i], right[i], at))
    }
    return differences
  }
  if (isObject(left) && isObject(right)) {
    const differences: Difference[] = []
    const rightKeys = presentKeys(right)
    for (const key of presentKeys(left)) {
      differences.push(...(right[key] === undefined ? [{ kind: 'removed' as const, path: keyPath(path, key), left: left[key] }] : diffJson(left[key], right[key], keyPath(path, key))))
    }
    for (const key of rightKeys) if (left[key] === undefined) differences.push({ kind: 'added', path: keyPath(path, key), right: right[key] })
    return differences
  }
  return Object.is(left, right) || (left === 0 && right === 0) ? [] : [{ kind: 'changed', path, left, right }]
}

const show = (value: unknown): string => JSON.stringify(value) ?? 'undefined'

/**
 * A readable line diff: each difference under its path, `-` for the left document's value and `+`
 * for the right one's, with a legend naming the two.
 */
export function formatDiff(differences: readonly Difference[], names: { left: string; right: string }): string {
  const lines = [`--- ${names.left}`, `+++ ${names.right}`]
  for (const difference of differences) {
    lines.push(`@ ${difference.path}`)
    if (difference.kind !== 'added') lines.push(`- ${show(difference.left)}`)
    if (difference.kind !== 'removed') lines.push(`+ ${show(difference.right)}`)
  }
  return lines.join('\n')
}
