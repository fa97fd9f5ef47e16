import { Handle, Position, useUpdateNodeInternals, type NodeProps, type NodeTypes } from '@xyflow/react'
import { createContext, Fragment, useContext, useEffect, type ReactNode } from 'react'
import { useT, type Translate } from '../i18n'
import { emptyProblems, exitsOf, hasEntry, type Exit, type FlowNode, type ProblemIndex } from '../flow/model'
import {
  isNodeType,
  type ConditionData,
  type KanbanMoveData,
  type MessageData,
  type NodeType,
  type OutgoingMessage,
  type QuestionData,
  type SetVariableData,
  type TransferData,
} from '../flow/types'
import { useWorkspace } from '../workspace'
import { NodeButtons } from './NodeButtons'

export const ProblemsContext = createContext<ProblemIndex>(emptyProblems())

export const NODE_ICONS: Record<NodeType, string> = {
  start: '▶',
  message: '✉',
  question: '?',
  condition: '◇',
  setVariable: '=',
  transfer: '⇄',
  kanbanMove: '▦',
  end: '■',
}

const clip = (text: string, max = 60) => (text.length > max ? `${text.slice(0, max - 1)}…` : text)

/** One line that tells what a message sends. */
export function previewMessage(message: OutgoingMessage | undefined, t: Translate): string {
  if (!message) return t('node.empty')
  switch (message.type) {
    case 'text':
      return message.text?.body || t('node.empty')
    case 'media':
      return `[${t(`media.${message.media?.type ?? 'image'}`)}] ${message.media?.caption || message.media?.url || ''}`
    case 'template':
      return `[${t('kind.template')}] ${message.template?.id ?? ''}`
    case 'interactive':
      return message.interactive?.body?.text || t('node.empty')
    default:
      return t('node.empty')
  }
}

function Summary({ node, t }: { node: FlowNode; t: Translate }): ReactNode {
  const { sectors, pipelines } = useWorkspace()
  const data = node.data
  switch (node.type) {
    case 'start':
      return t('node.entry')
    case 'end':
      return t('node.finish')
    case 'message': {
      const messages = (data as Partial<MessageData>).messages ?? []
      return (
        <>
          {messages.slice(0, 3).map((m, i) => (
            <Fragment key={i}>
              <p className="preview">{clip(previewMessage(m, t))}</p>
              <NodeButtons message={m} />
            </Fragment>
          ))}
          {messages.length > 3 && <p className="muted">{t('node.messages', { count: messages.length })}</p>}
        </>
      )
    }
    case 'question': {
      const q = data as Partial<QuestionData>
      return (
        <>
          <p className="preview">{clip(previewMessage(q.prompt, t))}</p>
          {q.input?.kind !== 'choice' && <NodeButtons message={q.prompt} />}
          <p className="muted">
            {t(`input.${q.input?.kind ?? 'text'}`)}
            {q.saveAs ? ` · ${t('node.savesTo', { name: q.saveAs })}` : ''}
          </p>
        </>
      )
    }
    case 'setVariable': {
      const s = data as Partial<SetVariableData>
      return <p className="preview">{t('node.sets', { name: s.variable || '?', value: clip(typeof s.value === 'object' ? JSON.stringify(s.value) : String(s.value ?? ''), 40) })}</p>
    }
    case 'transfer': {
      const tr = data as Partial<TransferData>
      if (tr.targetType === 'agent') return t('node.agent', { id: clip(tr.targetId ?? '', 13) })
      const sector = sectors.find((s) => s.id === tr.targetId)
      return sector ? t('node.sector', { name: sector.name }) : t('node.noSector')
    }
    case 'kanbanMove': {
      const k = data as Partial<KanbanMoveData>
      const pipeline = pipelines.find((p) => p.id === k.pipelineId)
      const stage = pipeline?.stages.find((s) => s.id === k.stageId)
      return pipeline && stage ? `${pipeline.name} → ${stage.name}` : t('node.noStage')
    }
    default:
      return null
  }
}

function exitLabel(node: FlowNode, exit: Exit, t: Translate): string {
  if (node.type === 'condition' && !exit.kind) {
    const rule = (node.data as Partial<ConditionData>).rules?.find((r) => r.id === exit.id)
    if (rule) return `${rule.id}: ${rule.variable} ${t(`op.${rule.operator}`)}${rule.operator === 'exists' ? '' : ` ${String(rule.value ?? '')}`}`
  }
  return exit.label ?? ''
}

/** Every node type: its header, a summary, an entry on the left and its exits on the right. */
function FlowNodeView(props: NodeProps<FlowNode>) {
  const t = useT()
  const { id, type, data, selected } = props
  const node = { id, type, data, position: { x: 0, y: 0 } } as FlowNode
  const exits = exitsOf(type, data)
  const problems = useContext(ProblemsContext).byNode.get(id)
  const updateInternals = useUpdateNodeInternals()
  const exitKey = exits.map((e) => e.id ?? '').join('\u0000')
  useEffect(() => updateInternals(id), [id, exitKey, updateInternals])

  const known = isNodeType(type)
  const single = exits.length === 1 && exits[0]?.id === null
  return (
    <div className={`flow-node type-${type}${selected ? ' selected' : ''}${problems ? ' has-problems' : ''}`} data-testid={`node-${id}`} data-node-type={type}>
      {hasEntry(type) && <Handle type="target" position={Position.Left} className="entry" />}
      <div className="node-header">
        <span className="node-icon" aria-hidden>
          {known ? NODE_ICONS[type] : '•'}
        </span>
        <span className="node-type">{known ? t(`type.${type}`) : t('type.unknown', { type })}</span>
        <span className="node-id">{id}</span>
      </div>
      <div className="node-body">
        <Summary node={node} t={t} />
      </div>
      {problems && (
        <div className="node-problems" title={problems.map((p) => p.message).join('\n')}>
          ⚠ {t('node.problems', { count: problems.length })}
          <ul>
            {problems.slice(0, 3).map((p, i) => (
              <li key={i}>{p.message}</li>
            ))}
          </ul>
        </div>
      )}
      {single && <Handle type="source" position={Position.Right} className="exit" />}
      {!single && exits.length > 0 && (
        <ul className="exits">
          {exits.map((exit) => (
            <li key={exit.id ?? ''} className={`exit-row ${exit.kind ?? 'choice'}`}>
              <span>{clip(exitLabel(node, exit, t), 36)}</span>
              <Handle type="source" position={Position.Right} id={exit.id ?? undefined} className="exit" />
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}

export const nodeTypes: NodeTypes = Object.fromEntries(['start', 'message', 'question', 'condition', 'setVariable', 'transfer', 'kanbanMove', 'end'].map((type) => [type, FlowNodeView]))
/** A type the editor does not know still shows, with its edges, and is saved as it was. */
export const UnknownNode = FlowNodeView
