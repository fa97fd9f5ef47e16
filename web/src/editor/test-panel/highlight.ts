import type { FlowNode } from '../flow/model'

/** The class of the node the preview session waits at (on React Flow's node wrapper). */
export const WAITING_CLASS = 'test-waiting'

/** The nodes as the canvas shows them: the one the preview waits at carries WAITING_CLASS. */
export function markWaiting(nodes: FlowNode[], waitingAt: string | null): FlowNode[] {
  if (waitingAt === null) return nodes
  return nodes.map((node) => (node.id === waitingAt ? { ...node, className: [node.className, WAITING_CLASS].filter(Boolean).join(' ') } : node))
}
