import type { Definition } from './api-types'

/** JSON with object keys sorted, so two definitions compare by content, not by key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined)
    return `{${entries
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`)
      .join(',')}}`
  }
  return JSON.stringify(value)
}

/** Whether the draft holds changes the newest published version does not. */
export const draftDiffers = (draft: Definition, published: Definition): boolean => canonical(draft) !== canonical(published)

/** What a definition holds, for a short summary: its nodes by type, in the order types first appear. */
export function definitionSummary(definition: Definition): { nodes: number; edges: number; byType: [type: string, count: number][] } {
  const byType = new Map<string, number>()
  for (const node of definition.nodes) byType.set(node.type, (byType.get(node.type) ?? 0) + 1)
  return { nodes: definition.nodes.length, edges: definition.edges.length, byType: [...byType] }
}

/**
 * The nodes in the order a conversation meets them: breadth first from the start node along the
 * edges, then any node nothing reaches, in the definition's order.
 */
export function flowOrder(definition: Definition): string[] {
  const next = new Map<string, string[]>()
  for (const edge of definition.edges) next.set(edge.source, [...(next.get(edge.source) ?? []), edge.target])
  const starts = definition.nodes.filter((node) => node.type === 'start').map((node) => node.id)
  const seen = new Set<string>(starts)
  const queue = [...starts]
  for (let index = 0; index < queue.length; index++) {
    for (const target of next.get(queue[index]!) ?? []) {
      if (!seen.has(target)) {
        seen.add(target)
        queue.push(target)
      }
    }
  }
  for (const node of definition.nodes) if (!seen.has(node.id)) queue.push(node.id)
  return queue
}
