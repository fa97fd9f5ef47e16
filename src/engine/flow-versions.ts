import { Value } from '@sinclair/typebox/value'
import { flowStream, type FlowEvent } from '../domain/flow.js'
import type { FlowDefinition } from '../domain/flow-definition.js'
import type { EventStore } from '../eventstore/port.js'
import type { RunnableFlow } from './interpreter.js'
import { nodeTypeOf, nodeTypes, type NodeTypes, type TypedNode } from '../domain/nodes/index.js'
import { BoundedMap } from '../bounded-map.js'

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

  private readonly store: EventStore

  constructor(
    store: EventStore,
    maxEntries = 1000,
  ) {
    this.store = store
    this.cache = new BoundedMap(maxEntries)
  }

  /** What a session runs: its preview's draft, or its published version. */
  async ofSession(session: { flowId: string; flowVersion: number; previewDefinition: FlowDefinition | null }): Promise<RunnableFlow | string> {
    return session.previewDefinition ? toRunnable(session.previewDefinition) : this.get(session.flowId, session.flowVersion)
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
