import { SYSTEM_VARIABLES, type VariableType } from '../variables.js'
import type { CheckContext, Segment } from './node-type.js'

export const article = (type: VariableType) => (type === 'object' ? 'an object' : `a ${type}`)

/** Saving into a variable: it must be a workspace variable (system ones are read-only) of the type saved. */
export function checkTarget(name: string, saved: VariableType, what: string, at: readonly Segment[], { catalog, report }: CheckContext): void {
  if (SYSTEM_VARIABLES.includes(name)) return report(at, `"${name}" is a system variable; it is read-only`)
  const type = catalog.variables.get(name)
  if (type === undefined) return report(at, `no variable "${name}" in this workspace`)
  if (type !== saved) report(at, `variable "${name}" holds ${article(type)}, but ${what}`)
}

/** Reports repeated ids, and an id that is also the node's fixed handle (`reserved`, when it has one). */
export function checkHandleIds(ids: { id: string; at: Segment[] }[], { report }: CheckContext, reserved?: { handle: string; of: string }): void {
  const first = new Map<string, number>()
  ids.forEach(({ id, at }, i) => {
    if (id === reserved?.handle) report(at, `"${reserved.handle}" is the handle of ${reserved.of}; choose another id`)
    else if (first.has(id)) report(at, `duplicate id "${id}"; each one is a handle of its own`)
    else first.set(id, i)
  })
}
