import type { NodeData, NodeTypeName } from '../../../../src/domain/nodes/index.js'
import type { Exit } from '../flow-definition'
import { useLang, useT } from '../i18n'
import { aiUi } from './ai'
import { conditionUi } from './condition'
import { delayUi } from './delay'
import { endUi } from './end'
import { httpRequestUi } from './http-request'
import { kanbanMoveUi } from './kanban-move'
import { messageUi } from './message'
import type { NodeUi } from './node-ui'
import { questionUi } from './question'
import { runFlowUi } from './run-flow'
import { setVariableUi } from './set-variable'
import { splitUi } from './split'
import { startUi } from './start'
import { transferUi } from './transfer'
import { waitForEventUi } from './wait-for-event'

/** How the editor shows each node type of the service's registry, in the palette's order. */
export const nodeUis = {
  start: startUi,
  message: messageUi,
  question: questionUi,
  condition: conditionUi,
  split: splitUi,
  setVariable: setVariableUi,
  httpRequest: httpRequestUi,
  ai: aiUi,
  waitForEvent: waitForEventUi,
  delay: delayUi,
  runFlow: runFlowUi,
  transfer: transferUi,
  kanbanMove: kanbanMoveUi,
  end: endUi,
} satisfies { [T in NodeTypeName]: NodeUi<NodeData<T>> }

export const NODE_TYPES = Object.keys(nodeUis) as NodeTypeName[]

export const isNodeType = (type: string): type is NodeTypeName => Object.hasOwn(nodeUis, type)

/**
 * The look of a node's type, or none for a type the editor does not know. A draft's node holds
 * whatever its document holds; its type's body and form read that data as their own.
 */
export const nodeUiOf = (type: string | undefined): NodeUi<Record<string, unknown>> | undefined =>
  type !== undefined && isNodeType(type) ? (nodeUis[type] as unknown as NodeUi<Record<string, unknown>>) : undefined

/** A node type's name in the editor's language; a type the editor does not know is named as unknown. */
export function useNodeTypeName(): (type: string) => string {
  const t = useT()
  const lang = useLang()
  return (type) => (isNodeType(type) ? nodeUis[type].strings[lang].name : t('type.unknown', { type }))
}

/** A node of `nodes` as people read it: its label or title, else its type's name and its id; an id of none of them as itself. */
export function useNodeName(nodes: readonly { id: string; type?: string; data: Record<string, unknown> }[]): (id: string) => string {
  const typeName = useNodeTypeName()
  return (id) => {
    const node = nodes.find((n) => n.id === id)
    if (!node) return id
    const label = node.data.label ?? node.data.title
    if (typeof label === 'string' && label.trim()) return label
    return node.type && isNodeType(node.type) ? `${typeName(node.type)} · ${id}` : id
  }
}

/**
 * What people read beside a node's exit, in the editor's language: its type's own words (a rule
 * with its operator, a button's title), else `default` and `invalid` translated, else its id.
 */
export function useExitLabel(): (node: { type?: string; data: Record<string, unknown> }, exit: Exit) => string {
  const t = useT()
  const lang = useLang()
  return (node, exit) => nodeUiOf(node.type)?.exitLabel?.(node.data, exit, lang) ?? (exit.kind ? t(`exit.${exit.kind}`) : (exit.label ?? exit.id ?? ''))
}
