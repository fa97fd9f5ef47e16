import type { paths } from '../../api'

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never

export type FlowItem = Json<paths['/v1/flows']['get']['responses'][200]>['content'][number]
export type FlowDetail = Json<paths['/v1/flows/{id}']['get']['responses'][200]>
export type Definition = FlowDetail['definition']
export type DefinitionNode = Definition['nodes'][number]
export type VersionItem = Json<paths['/v1/flows/{id}/versions']['get']['responses'][200]>['content'][number]
export type VersionDetail = Json<paths['/v1/flows/{id}/versions/{version}']['get']['responses'][200]>
export type FlowAnalytics = Json<paths['/v1/flows/{id}/analytics']['get']['responses'][200]>
export type NodeAnalytics = FlowAnalytics['nodes'][number]

/** The filters of GET /v1/flows, as the API names their values. */
export const DATE_RANGES = ['today', 'last7days', 'last15days', 'last30days'] as const
export type DateRange = (typeof DATE_RANGES)[number]
export const FLOW_ORDER_COLUMNS = ['createdAt', 'updatedAt', 'name'] as const
export const DIRECTIONS = ['ASC', 'DESC'] as const
export const PAGE_SIZES = ['10', '25', '50', '100'] as const

/** Days a date range covers, today included (the API counts calendar days the same way). */
export const DAYS_IN_RANGE: Record<DateRange, number> = { today: 1, last7days: 7, last15days: 15, last30days: 30 }

/** An id short enough for a table: its end, since ids made in the same moment share their beginning (UUIDv7). */
export const shortId = (id: string): string => id.slice(-8)

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

/**
 * The sessions that stopped at a node without completing there: still waiting, timed out (left) or
 * failed. A funnel's drop-off: they reached the node and went no further.
 */
export const stoppedHere = (node: NodeAnalytics): number => node.waitingHere + node.droppedOff + node.failedHere

/** The share of a node's sessions that stopped there (see `stoppedHere`): 0 when none reached it. */
export const dropOffRate = (node: NodeAnalytics): number => (node.reached === 0 ? 0 : stoppedHere(node) / node.reached)

/** A calendar day in the reader's time zone, as `YYYY-MM-DD`. */
export function dayOf(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0')
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`
}

export interface DayCount {
  day: string
  started: number
  completed: number
}

/**
 * The API's sessions per day (only days that had some) as a run of days ending `today`, zeros
 * included: `days` of them, or from the first day with sessions (a week at least).
 */
export function sessionsPerDay(counted: readonly { date: string; started: number; completed: number }[], today: Date, days?: number): DayCount[] {
  const byDay = new Map(counted.map((count) => [count.date, count]))
  const earliest = counted.reduce((first, count) => Math.min(first, Date.parse(`${count.date}T00:00:00`)), today.getTime())
  const spanDays = days ?? Math.max(7, Math.round((startOfDay(today) - startOfDay(new Date(earliest))) / 86_400_000) + 1)
  const result: DayCount[] = []
  for (let back = spanDays - 1; back >= 0; back--) {
    const day = dayOf(new Date(today.getFullYear(), today.getMonth(), today.getDate() - back))
    result.push({ day, started: byDay.get(day)?.started ?? 0, completed: byDay.get(day)?.completed ?? 0 })
  }
  return result
}

const startOfDay = (date: Date): number => new Date(date.getFullYear(), date.getMonth(), date.getDate()).getTime()
