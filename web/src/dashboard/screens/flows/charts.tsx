import { useId, useMemo, useState } from 'react'
import { layOutFlow, routePath } from '../../../shared/flow-layout'
import { nodeTypeName } from '../../../shared/node-names'
import { NodeName, useNodeNames } from '../../components/NodeName'
import { Empty } from '../../components/ui'
import { useT } from '../../i18n'
import { usePreferences } from '../../preferences'
import { branchShare, completionRate, dropOffRate, stoppedHere, type DayCount, type SplitTest } from './analytics-figures'
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
const SERIES = ['started', 'completed'] as const

/** Sessions started and, of those, completed per day, as a pair of bars a day with axes and a legend; the numbers also as a table, on request. */
export function SessionsChart({ days }: { days: DayCount[] }) {
  const t = useT()
  const dayLabel = useDayLabel()
  const tableId = useId()
  const [showTable, setShowTable] = useState(false)
  const total = days.reduce((sum, day) => sum + day.started, 0)
  const completed = days.reduce((sum, day) => sum + day.completed, 0)
  const busiest = days.reduce((best, day) => (day.started > best.started ? day : best), days[0]!)
  const top = axisTop(busiest.started)
  const plotWidth = CHART.width - CHART.left - CHART.right
  const plotHeight = CHART.height - CHART.top - CHART.bottom
  const slot = plotWidth / days.length
  const barWidth = Math.max(2, Math.min(28, (slot * 0.76) / 2))
  const labelEvery = Math.ceil(days.length / 10)
  const y = (value: number) => CHART.top + plotHeight - (value / top) * plotHeight
  const range = { from: dayLabel(days[0]!.day), to: dayLabel(days.at(-1)!.day) }
  const summary =
    total === 0
      ? t('flows.chart.summaryNone', range)
      : t('flows.chart.summary', { ...range, total, completed, busiest: dayLabel(busiest.day), most: busiest.started })

  return (
    <figure className="flows-chart">
      <ul className="flows-chart-legend" aria-hidden="true">
        {SERIES.map((series) => (
          <li key={series}>
            <span className={`flows-swatch ${series}`} />
            {t(`flows.chart.${series}`)}
          </li>
        ))}
      </ul>
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
          const middle = CHART.left + slot * index + slot / 2
          return (
            <g key={day.day}>
              {SERIES.map((series, nth) => {
                const value = day[series]
                const x = middle - barWidth + nth * barWidth
                if (value === 0) return null
                return (
                  <g key={series}>
                    <rect className={`flows-bar ${series}`} x={x} y={y(value)} width={barWidth - 1} height={y(0) - y(value)} rx={2}>
                      <title>{`${dayLabel(day.day)}: ${t(`flows.chart.${series}`)} ${value}`}</title>
                    </rect>
                    {slot >= 28 && (
                      <text className="flows-bar-value" x={x + barWidth / 2} y={y(value) - 4} textAnchor="middle">
                        {value}
                      </text>
                    )}
                  </g>
                )
              })}
              {(index % labelEvery === 0 || index === days.length - 1) && (
                <text x={middle} y={CHART.top + plotHeight + 16} textAnchor="middle">
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
              {SERIES.map((series) => (
                <th key={series} scope="col">
                  {t(`flows.chart.${series}`)}
                </th>
              ))}
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
  const nodeName = useNodeNames(definition)
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
              <NodeName node={nodeName(node.nodeId)} gist />
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

/**
 * One split node's A/B test: per branch, the sessions that drew it, how many of them completed and
 * at what rate, and its share of the sessions that reached the split (a bar); until a session draws
 * a branch, a line saying so.
 */
export function SplitTable({ split, definition }: { split: SplitTest; definition: Definition }) {
  const t = useT()
  const nodeName = useNodeNames(definition)
  const name = <NodeName node={nodeName(split.nodeId)} />
  if (split.branches.every((branch) => branch.sessions === 0)) {
    return (
      <div className="flows-split" data-node={split.nodeId}>
        <p className="flows-split-name">{name}</p>
        <Empty>{t('flows.split.none')}</Empty>
      </div>
    )
  }
  return (
    <div className="flows-split" data-node={split.nodeId}>
      <table className="flows-data flows-split-table">
        <caption className="flows-caption">
          <span className="flows-split-name">{name}</span> <span>{t('flows.split.caption', { reached: split.reached })}</span>
        </caption>
        <thead>
          <tr>
            <th scope="col">{t('flows.split.branch')}</th>
            <th scope="col">{t('flows.split.sessions')}</th>
            <th scope="col">{t('flows.split.completed')}</th>
            <th scope="col">{t('flows.split.completionRate')}</th>
            <th scope="col" className="flows-funnel-bar-head">
              {t('flows.split.share')}
            </th>
          </tr>
        </thead>
        <tbody>
          {split.branches.map((branch) => (
            <tr key={branch.branchId} data-branch={branch.branchId}>
              <th scope="row">{branch.branchId}</th>
              <td>{branch.sessions}</td>
              <td>{branch.completed}</td>
              <td>{branch.sessions === 0 ? t('common.none') : percent(completionRate(branch))}</td>
              <td>
                <div className="flows-funnel-cell">
                  <span className="flows-funnel-track" aria-hidden="true">
                    <span className="flows-funnel-bar" style={{ width: percent(Math.min(1, branchShare(branch, split))) }} />
                  </span>
                  <span>{percent(branchShare(branch, split))}</span>
                </div>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

const NODE = { width: 180, height: 92, padding: 10, margin: 16 }
const TITLE_FONT = { size: 14, weight: 600 }
const SMALL_FONT = { size: 12, weight: 400 }

/**
 * `text` cut with an ellipsis to fit `width` pixels in the page's font at `font`: measured on a
 * canvas, or by a cautious width per character where there is none.
 */
function fitter(): (text: string, width: number, font: { size: number; weight: number }) => string {
  const context = document.createElement('canvas').getContext('2d')
  const family = getComputedStyle(document.body).fontFamily || 'sans-serif'
  const measure = (text: string, font: { size: number; weight: number }) => {
    if (!context) return text.length * font.size * 0.62
    context.font = `${font.weight} ${font.size}px ${family}`
    return context.measureText(text).width
  }
  return (text, width, font) => {
    if (measure(text, font) <= width) return text
    let fits = 0
    for (let low = 0, high = text.length; low <= high; ) {
      const middle = (low + high) >> 1
      if (measure(`${text.slice(0, middle).trimEnd()}…`, font) <= width) {
        fits = middle
        low = middle + 1
      } else high = middle - 1
    }
    return `${text.slice(0, fits).trimEnd()}…`
  }
}

/**
 * The version's nodes laid out as the editor arranges them (columns by their edges, the shared
 * layered layout), edges routed between them; each node tinted by its drop-off (the share of the
 * sessions reaching it that stopped there), and labelled with its name and numbers, cut to its box.
 */
export function DropOffDiagram({ analytics, definition }: { analytics: FlowAnalytics; definition: Definition }) {
  const t = useT()
  const nodeName = useNodeNames(definition)
  const markerId = useId().replace(/:/g, '')
  const { lang } = usePreferences()
  const fit = useMemo(fitter, [])
  const layout = useMemo(
    () =>
      layOutFlow(
        definition.nodes.map((node) => ({ id: node.id, width: NODE.width, height: NODE.height })),
        definition.edges.map((edge) => ({ id: edge.id, source: edge.source, target: edge.target })),
        { rankGap: 64, nodeGap: 28 },
      ),
    [definition],
  )
  if (definition.nodes.length === 0) return null
  const counts = new Map(analytics.nodes.map((node) => [node.nodeId, node]))
  const worst = analytics.nodes.reduce<NodeAnalytics | undefined>((most, node) => (dropOffRate(node) > (most ? dropOffRate(most) : 0) ? node : most), undefined)
  const summary = worst
    ? t('flows.diagram.summary', { nodes: definition.nodes.length, node: nodeName(worst.nodeId).name, count: stoppedHere(worst), reached: worst.reached, rate: percent(dropOffRate(worst)) })
    : t('flows.diagram.summaryNone', { nodes: definition.nodes.length })
  const width = layout.width + 2 * NODE.margin
  const height = layout.height + 2 * NODE.margin
  const inner = NODE.width - 2 * NODE.padding

  return (
    <figure className="flows-diagram">
      <div className="flows-diagram-scroll" tabIndex={0} role="group" aria-label={t('flows.analytics.dropOff')}>
        <svg width={width} height={height} viewBox={`${-NODE.margin} ${-NODE.margin} ${width} ${height}`} role="img" aria-label={summary} data-testid="dropoff-diagram">
          <defs>
            <marker id={markerId} viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
              <path d="M 0 0 L 10 5 L 0 10 z" className="flows-arrow" />
            </marker>
          </defs>
          {definition.edges.map((edge) => {
            const route = layout.routes.get(edge.id)
            if (!route || route.length < 2) return null
            return <path key={edge.id} className="flows-edge" d={routePath(route)} markerEnd={`url(#${markerId})`} data-source={edge.source} data-target={edge.target} />
          })}
          {definition.nodes.map((node) => {
            const at = layout.positions.get(node.id)
            if (!at) return null
            const count = counts.get(node.id)
            const rate = count ? dropOffRate(count) : 0
            const shown = nodeName(node.id)
            const stopped = t('flows.diagram.stopped', { count: count ? stoppedHere(count) : 0, rate: percent(rate) })
            const reached = t('flows.diagram.reached', { count: count?.reached ?? 0 })
            return (
              <g key={node.id} transform={`translate(${at.x} ${at.y})`} data-node={node.id} data-drop-off={count ? stoppedHere(count) : 0}>
                <title>{`${shown.name}${shown.gist ? `: ${shown.gist}` : ''} (${nodeTypeName(node.type, lang)}, ${node.id}): ${reached}, ${stopped}`}</title>
                <rect
                  className="flows-node"
                  width={NODE.width}
                  height={NODE.height}
                  rx={8}
                  style={{ fill: `color-mix(in srgb, var(--danger) ${Math.round(rate * 55)}%, var(--surface))` }}
                />
                <text x={NODE.padding} y={22} className="flows-node-title">
                  {fit(shown.name, inner, TITLE_FONT)}
                </text>
                {shown.gist && (
                  <text x={NODE.padding} y={40} className="flows-node-gist">
                    {fit(shown.gist, inner, SMALL_FONT)}
                  </text>
                )}
                <text x={NODE.padding} y={shown.gist ? 62 : 52} className="flows-node-numbers">
                  {fit(reached, inner, SMALL_FONT)}
                </text>
                <text x={NODE.padding} y={shown.gist ? 80 : 70} className="flows-node-numbers">
                  {fit(stopped, inner, SMALL_FONT)}
                </text>
              </g>
            )
          })}
        </svg>
      </div>
      <figcaption className="flows-legend">
        <span>{t('flows.diagram.legendNone')}</span>
        <span className="flows-legend-scale" aria-hidden="true" />
        <span>{t('flows.diagram.legendAll')}</span>
      </figcaption>
    </figure>
  )
}
