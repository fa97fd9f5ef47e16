import type { BranchAnalytics, FlowAnalytics, NodeAnalytics } from './api-types'

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

/** A split node of the version (an A/B test): the sessions that reached it, and its branches' counts. */
export interface SplitTest {
  nodeId: string
  reached: number
  branches: BranchAnalytics[]
}

/** The version's split nodes in the order `nodeIds` gives (the flow's), each with its branches in the definition's order. */
export function splitTests(analytics: FlowAnalytics, nodeIds: readonly string[]): SplitTest[] {
  const reached = new Map(analytics.nodes.map((node) => [node.nodeId, node.reached]))
  return nodeIds.flatMap((nodeId) => {
    const branches = analytics.branches.filter((branch) => branch.nodeId === nodeId)
    return branches.length === 0 ? [] : [{ nodeId, reached: reached.get(nodeId) ?? 0, branches }]
  })
}

/** The share of a branch's sessions that completed: 0 when none drew it. */
export const completionRate = (branch: BranchAnalytics): number => (branch.sessions === 0 ? 0 : branch.completed / branch.sessions)

/**
 * The share of the sessions that reached the split that drew the branch. A session that passes the
 * split again draws again, so a split's shares may add up to more than all.
 */
export const branchShare = (branch: BranchAnalytics, split: SplitTest): number => (split.reached === 0 ? 0 : branch.sessions / split.reached)
