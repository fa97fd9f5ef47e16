import { useId, useState } from 'react'
import { useT } from '../../i18n'
import { usePreferences } from '../../preferences'
import { dropOffRate, stoppedHere, type DayCount } from './analytics-figures'
import type { Definition, FlowAnalytics, NodeAnalytics } from './api-types'
import { flowOrder } from './definition'

const percent = (share: number) => `${Math.round(share * 100)}%`

/** A round axis top above `max` (1, 2 or 5 times a power of ten), so ticks fall on whole numbers. */
function axisTop(max: number): number {
  if (max <= 4) return 4
  const power = 10 ** Math.floor(Math.log10(max))
  const step = [1, 2, 5, 10].map((factor) => factor * power).find((top) => top >= max)
  return step ?? 10 * power
}

function useDayLabel(): (day: string) => string {
  const { lang } = usePreferences()
  const format = new Intl.DateTimeFormat(lang === 'pt' ? 'pt-BR' : 'en', { day: 'numeric', month: 'short' })
  return (day) => {
    const [year, month, date] = day.split('-').map(Number)
    return format.format(new Date(year!, month! - 1, date!))
  }
}

const CHART = { width: 1000, height: 280, left: 48, right: 12, top: 16, bottom: 52 }

/** Sessions started per day as bars with axes; the numbers also as a table, on request. */
export function SessionsChart({ days }: { days: DayCount[] }) {
  const t = useT()
  const dayLabel = useDayLabel()
  const tableId = useId()
  const [showTable, setShowTable] = useState(false)
  const total = days.reduce((sum, day) => sum + day.started, 0)
  const busiest = days.reduce((best, day) => (day.started > best.started ? day : best), days[0]!)
  const top = axisTop(busiest.started)
  const plotWidth = CHART.width - CHART.left - CHART.right
  const plotHeight = CHART.height - CHART.top - CHART.bottom
  const slot = plotWidth / days.length
  const barWidth = Math.max(2, Math.min(40, slot * 0.7))
  const labelEvery = Math.ceil(days.length / 10)
  const y = (value: number) => CHART.top + plotHeight - (value / top) * plotHeight
  const summary =
    total === 0
      ? t('flows.chart.summaryNone', { from: dayLabel(days[0]!.day), to: dayLabel(days.at(-1)!.day) })
      : t('flows.chart.summary', { from: dayLabel(days[0]!.day), to: dayLabel(days.at(-1)!.day), total, busiest: dayLabel(busiest.day), most: busiest.started })

  return (
    <figure className="flows-chart">
      <svg viewBox={`0 0 ${CHART.width} ${CHART.height}`} role="img" aria-label={summary} data-testid="sessions-chart">
        {[0, top / 2, top].map((tick) => (
          <g key={tick} className="flows-chart-tick">
            <line x1={CHART.left} x2={CHART.width - CHART.right} y1={y(tick)} y2={y(tick)} className={tick === 0 ? 'flows-axis' : 'flows-grid'} />
            <text x={CHART.left - 6} y={y(tick)} dy="0.35em" textAnchor="end">
              {tick}
            </text>
          </g>
        ))}
        <text className="flows-axis-title" transform={`translate(12 ${CHART.top + plotHeight / 2}) rotate(-90)`} textAnchor="middle">
          {t('flows.chart.sessions')}
        </text>
        {days.map((day, index) => {
          const x = CHART.left + slot * index + (slot - barWidth) / 2
          return (
            <g key={day.day}>
              {day.started > 0 && (
                <rect className="flows-bar" x={x} y={y(day.started)} width={barWidth} height={y(0) - y(day.started)} rx={2}>
                  <title>{`${dayLabel(day.day)}: ${day.started}`}</title>
                </rect>
              )}
              {day.started > 0 && slot >= 14 && (
                <text className="flows-bar-value" x={x + barWidth / 2} y={y(day.started) - 4} textAnchor="middle">
                  {day.started}
                </text>
              )}
              {(index % labelEvery === 0 || index === days.length - 1) && (
                <text x={x + barWidth / 2} y={CHART.top + plotHeight + 16} textAnchor="middle">
                  {dayLabel(day.day)}
                </text>
              )}
            </g>
          )
        })}
        <text className="flows-axis-title" x={CHART.left + plotWidth / 2} y={CHART.height - 6} textAnchor="middle">
          {t('flows.chart.day')}
        </text>
      </svg>
      <figcaption>
        <button type="button" className="secondary" aria-expanded={showTable} aria-controls={tableId} onClick={() => setShowTable((shown) => !shown)}>
          {showTable ? t('flows.chart.hideTable') : t('flows.chart.showTable')}
        </button>
      </figcaption>
      <div id={tableId} hidden={!showTable}>
        <table className="flows-data">
          <caption className="flows-caption">{t('flows.analytics.perDay')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('flows.chart.day')}</th>
              <th scope="col">{t('flows.analytics.sessions.total')}</th>
              <th scope="col">{t('flows.analytics.sessions.completed')}</th>
            </tr>
          </thead>
          <tbody>
            {days.map((day) => (
              <tr key={day.day}>
                <th scope="row">{dayLabel(day.day)}</th>
                <td>{day.started}</td>
                <td>{day.completed}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </figure>
  )
}

/** The nodes' counts in the order a conversation meets them, each with a bar of the sessions that reached it. */
function nodesInFlowOrder(analytics: FlowAnalytics, definition: Definition): NodeAnalytics[] {
  const byId = new Map(analytics.nodes.map((node) => [node.nodeId, node]))
  return flowOrder(definition).flatMap((id) => byId.get(id) ?? [])
}

/** The funnel: per node in flow order, how many sessions reached it (a bar), answered, and ended there, and how. */
export function FunnelTable({ analytics, definition }: { analytics: FlowAnalytics; definition: Definition }) {
  const t = useT()
  const nodes = nodesInFlowOrder(analytics, definition)
  const scale = Math.max(analytics.sessions.total, ...nodes.map((node) => node.reached), 1)
  return (
    <table className="flows-funnel" data-testid="funnel">
      <caption className="flows-caption">{t('flows.funnel.caption', { total: analytics.sessions.total })}</caption>
      <thead>
        <tr>
          <th scope="col">{t('flows.funnel.node')}</th>
          <th scope="col" className="flows-funnel-bar-head">
            {t('flows.funnel.reached')}
          </th>
          <th scope="col">{t('flows.funnel.answered')}</th>
          <th scope="col">{t('flows.funnel.dropOff')}</th>
          <th scope="col">{t('flows.funnel.waiting')}</th>
          <th scope="col">{t('flows.funnel.droppedOff')}</th>
          <th scope="col">{t('flows.funnel.failed')}</th>
          <th scope="col">{t('flows.funnel.completed')}</th>
        </tr>
      </thead>
      <tbody>
        {nodes.map((node) => (
          <tr key={node.nodeId}>
            <th scope="row">
              <span className="mono">{node.nodeId}</span> <span className="hint">{node.type}</span>
            </th>
            <td>
              <div className="flows-funnel-cell">
                <span className="flows-funnel-track" aria-hidden="true">
                  <span className="flows-funnel-bar" style={{ width: percent(node.reached / scale) }} />
                </span>
                <span>{node.reached}</span>
              </div>
            </td>
            <td>{node.type === 'question' ? node.answered : t('common.none')}</td>
            <td>{stoppedHere(node) > 0 ? <strong>{t('flows.funnel.rate', { count: stoppedHere(node), rate: percent(dropOffRate(node)) })}</strong> : 0}</td>
            <td>{node.waitingHere}</td>
            <td>{node.droppedOff}</td>
            <td>{node.failedHere}</td>
            <td>{node.completedHere}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

const NODE = { width: 176, height: 72, padding: 32 }
// A backward edge (to a node further left: a loop) bends this far below its two nodes.
const LOOP_DEPTH = 56

/** An edge's path: forward from the source's right side to the target's left; a loop underneath both. */
function edgePath(from: { x: number; y: number }, to: { x: number; y: number }): string {
  if (to.x < from.x) {
    const [x1, y1, x2, y2] = [from.x + NODE.width / 2, from.y + NODE.height, to.x + NODE.width / 2, to.y + NODE.height]
    const low = Math.max(y1, y2) + LOOP_DEPTH
    return `M ${x1} ${y1} C ${x1} ${low}, ${x2} ${low}, ${x2} ${y2}`
  }
  const [x1, y1, x2, y2] = [from.x + NODE.width, from.y + NODE.height / 2, to.x, to.y + NODE.height / 2]
  const bend = Math.max(40, Math.abs(x2 - x1) / 2)
  return `M ${x1} ${y1} C ${x1 + bend} ${y1}, ${x2 - bend} ${y2}, ${x2} ${y2}`
}

/**
 * The version's nodes where the editor placed them, joined by their edges; each node tinted by its
 * drop-off (the share of the sessions reaching it that stopped there), and labelled with the numbers.
 */
export function DropOffDiagram({ analytics, definition }: { analytics: FlowAnalytics; definition: Definition }) {
  const t = useT()
  const markerId = useId().replace(/:/g, '')
  const counts = new Map(analytics.nodes.map((node) => [node.nodeId, node]))
  const positions = new Map(definition.nodes.map((node) => [node.id, node.position]))
  if (definition.nodes.length === 0) return null
  const xs = definition.nodes.map((node) => node.position.x)
  const ys = definition.nodes.map((node) => node.position.y)
  const left = Math.min(...xs) - NODE.padding
  const top = Math.min(...ys) - NODE.padding
  const width = Math.max(...xs) - left + NODE.width + NODE.padding
  const loops = definition.edges.some((edge) => (positions.get(edge.target)?.x ?? 0) < (positions.get(edge.source)?.x ?? 0))
  const height = Math.max(...ys) - top + NODE.height + NODE.padding + (loops ? LOOP_DEPTH : 0)
  const worst = analytics.nodes.reduce<NodeAnalytics | undefined>((most, node) => (dropOffRate(node) > (most ? dropOffRate(most) : 0) ? node : most), undefined)
  const summary = worst
    ? t('flows.diagram.summary', { nodes: definition.nodes.length, node: worst.nodeId, count: stoppedHere(worst), reached: worst.reached, rate: percent(dropOffRate(worst)) })
    : t('flows.diagram.summaryNone', { nodes: definition.nodes.length })

  return (
    <figure className="flows-diagram">
      <svg viewBox={`${left} ${top} ${width} ${height}`} role="img" aria-label={summary} data-testid="dropoff-diagram" style={{ maxHeight: `${Math.min(height, 520)}px` }}>
        <defs>
          <marker id={markerId} viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M 0 0 L 10 5 L 0 10 z" className="flows-arrow" />
          </marker>
        </defs>
        {definition.edges.map((edge) => {
          const from = positions.get(edge.source)
          const to = positions.get(edge.target)
          if (!from || !to) return null
          return <path key={edge.id} className="flows-edge" d={edgePath(from, to)} markerEnd={`url(#${markerId})`} />
        })}
        {definition.nodes.map((node) => {
          const count = counts.get(node.id)
          const rate = count ? dropOffRate(count) : 0
          return (
            <g key={node.id} transform={`translate(${node.position.x} ${node.position.y})`} data-node={node.id} data-drop-off={count ? stoppedHere(count) : 0}>
              <rect
                className="flows-node"
                width={NODE.width}
                height={NODE.height}
                rx={8}
                style={{ fill: `color-mix(in srgb, var(--danger) ${Math.round(rate * 55)}%, var(--surface))` }}
              />
              <text x={10} y={22} className="flows-node-title">
                {node.id} <tspan className="flows-node-type">· {node.type}</tspan>
              </text>
              <text x={10} y={44} className="flows-node-numbers">
                {t('flows.diagram.reached', { count: count?.reached ?? 0 })}
              </text>
              <text x={10} y={62} className="flows-node-numbers">
                {t('flows.diagram.stopped', { count: count ? stoppedHere(count) : 0, rate: percent(rate) })}
              </text>
            </g>
          )
        })}
      </svg>
      <figcaption className="flows-legend">
        <span>{t('flows.diagram.legendNone')}</span>
        <span className="flows-legend-scale" aria-hidden="true" />
        <span>{t('flows.diagram.legendAll')}</span>
      </figcaption>
    </figure>
  )
}
