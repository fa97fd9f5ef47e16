import { Type, type Static } from '@sinclair/typebox'
import { Uuid } from '../schemas.js'
import type { CheckContext, Exit, NodeOf, Step, WorkspaceCatalog } from './node-type.js'

/** How deep sub-flows nest: a flow, and at most this many flows it runs one inside the other. */
export const MAX_SUBFLOW_DEPTH = 5
export const DONE_HANDLE = 'done'

/**
 * Runs another flow of the workspace inside this one (a sub-flow), with the session's variables:
 * `published`, the version published newest when the session started, or a version number. It
 * comes back by `done` when the called flow reaches an `end` node or an exit with no edge; a
 * `transfer` there ends the whole session, like everywhere else.
 */
export const schema = Type.Object({
  flowId: Uuid,
  version: Type.Union([Type.Literal('published'), Type.Integer({ minimum: 1 })]),
})
export type Data = Static<typeof schema>

export const exits = (): readonly Exit[] => [{ id: DONE_HANDLE, label: DONE_HANDLE, kind: 'default' }]

/**
 * The called flow is one of the workspace's (every flow has a version 1 from its creation) and has
 * the version named. A flow that would
 * run itself, through the flows as they are published now, is refused; so are sub-flows nested
 * deeper than MAX_SUBFLOW_DEPTH that way. The engine checks both again at run time, always.
 */
export const check = ({ flowId, version }: Data, { catalog, report }: CheckContext): void => {
  if (flowId === catalog.flowId) return report(['flowId'], 'a flow cannot run itself')
  const called = catalog.flows?.get(flowId)
  if (!called) return report(['flowId'], `no flow ${flowId} in this workspace`)
  if (version !== 'published' && version > called.publishedVersion) return report(['version'], `flow "${called.name}" has no version ${version} (its newest is ${called.publishedVersion})`)
  const path = longestCallPath(catalog, flowId, catalog.flowId)
  if (path.cycle) report(['flowId'], `flow "${called.name}" runs this flow again (${path.names.join(' → ')}): sub-flows cannot run in a circle`)
  else if (path.names.length > MAX_SUBFLOW_DEPTH) report(['flowId'], `sub-flows nest ${path.names.length} deep from here (${path.names.join(' → ')}); at most ${MAX_SUBFLOW_DEPTH}`)
}

/** The longest chain of runFlow calls from `flowId` through the published flows, and whether it reaches `self`. */
function longestCallPath(catalog: WorkspaceCatalog, flowId: string, self: string | undefined): { names: string[]; cycle: boolean } {
  const walk = (id: string, seen: readonly string[]): { names: string[]; cycle: boolean } => {
    const flow = catalog.flows?.get(id)
    const names = [...seen, flow?.name ?? id]
    if (id === self || seen.length > MAX_SUBFLOW_DEPTH) return { names, cycle: id === self }
    let longest = { names, cycle: false }
    for (const next of flow?.runs ?? []) {
      const found = walk(next, names)
      if (found.cycle) return found
      if (found.names.length > longest.names.length) longest = found
    }
    return longest
  }
  return walk(flowId, [])
}

export const run = ({ data }: NodeOf<typeof schema>): Step => ({ enter: { flowId: data.flowId, version: data.version } })
