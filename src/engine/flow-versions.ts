import { Value } from '@sinclair/typebox/value'
import { flowStream, type FlowEvent } from '../domain/flow.js'
import type { FlowDefinition } from '../domain/flow-definition.js'
import type { EventStore } from '../eventstore/port.js'
import type { RunnableFlow } from './interpreter.js'
import { nodeTypeOf, nodeTypes, type NodeTypes, type TypedNode } from '../domain/nodes/index.js'
import { BoundedMap } from '../bounded-map.js'
import type { SubflowRef } from '../domain/nodes/node-type.js'
import { MAX_SUBFLOW_DEPTH } from '../domain/nodes/run-flow.js'
import { subflowKey, type Subflow, type Subflows } from '../domain/turn.js'

/** The definition with every node's data checked against its type, or why it cannot run. */
export function toRunnable(definition: FlowDefinition, types: NodeTypes = nodeTypes): RunnableFlow | string {
  const nodes: TypedNode[] = []
  for (const node of definition.nodes) {
    const type = nodeTypeOf(types, node.type)
    if (!type) return `node ${node.id} has unknown type ${node.type}`
    if (!Value.Check(type.schema, node.data)) return `node ${node.id} has invalid ${node.type} data`
    // Value.Check proved that data matches its type's schema; TypeScript cannot correlate the two.
    nodes.push(node as TypedNode)
  }
  return { ...definition, nodes }
}

/**
 * Published flow versions, read from the flow's stream. A version never changes once published,
 * so it is kept in memory after the first read.
 */
export class FlowVersions {
  private readonly cache: BoundedMap<string, RunnableFlow | string>
  private readonly histories: BoundedMap<string, PublishHistory>

  private readonly store: EventStore

  constructor(
    store: EventStore,
    maxEntries = 1000,
  ) {
    this.store = store
    this.cache = new BoundedMap(maxEntries)
    this.histories = new BoundedMap(maxEntries)
  }

  /**
   * What a session runs: its preview's draft, or its published version, with the flows its runFlow
   * nodes run (`subflows`) when there are some.
   */
  async ofSession(session: SessionFlowRef): Promise<RunnableFlow | string> {
    const flow = session.previewDefinition ? toRunnable(session.previewDefinition) : await this.get(session.flowId, session.flowVersion)
    if (typeof flow === 'string' || !runsFlows(flow)) return flow
    return { ...flow, subflows: await this.subflowsOf(flow, session) }
  }

  /**
   * Every flow the runFlow nodes of `flow` may run, and theirs in turn, as deep as sub-flows nest,
   * loaded now so that the turn itself reads nothing: each in the version its node names,
   * `published` being the flow's live version when the session started. A flow of another
   * workspace is not found, like everywhere else.
   */
  private async subflowsOf(flow: RunnableFlow, session: SessionFlowRef): Promise<Subflows> {
    const found = new Map<string, Subflow | string>()
    let level: RunnableFlow[] = [flow]
    for (let depth = 0; depth < MAX_SUBFLOW_DEPTH && level.length > 0; depth++) {
      const next: RunnableFlow[] = []
      for (const ref of level.flatMap(runFlowRefs)) {
        if (found.has(subflowKey(ref))) continue
        const resolved = await this.resolve(ref, session)
        found.set(subflowKey(ref), typeof resolved === 'string' ? resolved : resolved.subflow)
        if (typeof resolved === 'string') continue
        found.set(subflowKey({ flowId: ref.flowId, version: resolved.subflow.version }), resolved.subflow)
        next.push(resolved.flow)
      }
      level = next
    }
    return found
  }

  private async resolve(ref: SubflowRef, session: SessionFlowRef): Promise<{ subflow: Subflow; flow: RunnableFlow } | string> {
    const history = await this.publishHistory(ref.flowId, session.startedAt)
    if (!history || history.workspaceId !== session.workspaceId) return `flow ${ref.flowId} not found in this workspace`
    const version = ref.version === 'published' ? history.live.filter((change) => change.at <= session.startedAt).at(-1)?.version : ref.version
    if (version === undefined) return `flow ${ref.flowId} had no published version when the session started`
    const runnable = await this.get(ref.flowId, version)
    return typeof runnable === 'string' ? runnable : { subflow: { version, nodes: runnable.nodes, edges: runnable.edges }, flow: runnable }
  }

  /**
   * A flow's workspace and the versions it made live, from its stream; kept while it tells every
   * change before `startedAt` (it was read after that, a second's margin for clocks apart).
   */
  private async publishHistory(flowId: string, startedAt: string): Promise<PublishHistory | undefined> {
    const cached = this.histories.get(flowId)
    if (cached && cached.readAt > Date.parse(startedAt) + 1000) return cached
    const events = (await this.store.readStream(flowStream(flowId))) as unknown as FlowEvent[]
    const created = events.find((e) => e.type === 'FlowCreated')
    if (!created || created.type !== 'FlowCreated') return undefined
    const live = events.flatMap((e) => {
      if (e.type === 'FlowPublished') return [{ version: e.data.version, at: e.data.publishedAt }]
      if (e.type === 'FlowReleaseChanged') return [{ version: e.data.liveVersion, at: e.data.changedAt }]
      return []
    })
    const history = { workspaceId: created.data.workspaceId, live, readAt: Date.now() }
    this.histories.set(flowId, history)
    return history
  }

  /** The runnable version, or a sentence saying why there is none. */
  async get(flowId: string, version: number): Promise<RunnableFlow | string> {
    const key = `${flowId}@${version}`
    const cached = this.cache.get(key)
    if (cached) return cached
    const events = (await this.store.readStream(flowStream(flowId))) as unknown as FlowEvent[]
    const published = events.find((e) => e.type === 'FlowPublished' && e.data.version === version)
    if (!published || published.type !== 'FlowPublished') return `flow ${flowId} has no published version ${version}`
    const runnable = toRunnable(published.data.definition)
    this.cache.set(key, runnable)
    return runnable
  }
}

/** What a session says of the flow it runs. */
export interface SessionFlowRef {
  flowId: string
  flowVersion: number
  previewDefinition: FlowDefinition | null
  workspaceId: string
  startedAt: string
}

interface PublishHistory {
  workspaceId: string
  /** The live version from `at` on, oldest first: a publish makes its version live, a release change the version it names. */
  live: { version: number; at: string }[]
  readAt: number
}

const runFlowRefs = (flow: RunnableFlow): SubflowRef[] => flow.nodes.flatMap((node) => (node.type === 'runFlow' ? [node.data] : []))
const runsFlows = (flow: RunnableFlow): boolean => flow.nodes.some((node) => node.type === 'runFlow')
