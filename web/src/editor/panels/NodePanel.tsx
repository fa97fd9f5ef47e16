import type { ReactNode } from 'react'
import { useT } from '../i18n'
import type { FlowNode } from '../flow/model'
import { isNodeType, type ConditionData, type KanbanMoveData, type MessageData, type Problem, type QuestionData, type SetVariableData, type TransferData } from '../flow/types'
import { NODE_ICONS } from '../canvas/nodes'
import { ConditionForm, KanbanMoveForm, MessageForm, QuestionForm, SetVariableForm, TransferForm } from '../forms/NodeForms'

export interface NodePanelProps {
  node: FlowNode
  problems: Problem[] | undefined
  onChange(data: Record<string, unknown>): void
  onRenameExit(from: string, to: string): void
  onDelete(): void
  /** Shown after the form, before the delete button (where the node's exits lead). */
  children?: ReactNode
}

/** The side panel for the selected node: its problems and the form of its type. */
export function NodePanel({ node, problems, onChange, onRenameExit, onDelete, children }: NodePanelProps) {
  const t = useT()
  const type = node.type ?? ''
  const known = isNodeType(type)
  return (
    <div className="node-panel" data-testid="node-panel">
      <h2 className={`type-${type}`}>
        <span className="node-icon" aria-hidden>
          {known ? NODE_ICONS[type] : '•'}
        </span>{' '}
        {known ? t(`type.${type}`) : t('type.unknown', { type })}
      </h2>
      <p className="muted">
        {t('panel.nodeId')}: <code>{node.id}</code>
      </p>
      {problems && problems.length > 0 && (
        <div className="problems-box" role="alert">
          <strong>{t('panel.problemsHere')}</strong>
          <ul>
            {problems.map((p, i) => (
              <li key={i}>{p.message}</li>
            ))}
          </ul>
        </div>
      )}
      <NodeForm node={node} onChange={onChange} onRenameExit={onRenameExit} />
      {children}
      {node.type !== 'start' && (
        <button type="button" className="danger wide" onClick={onDelete}>
          {t('panel.delete')}
        </button>
      )}
    </div>
  )
}

function NodeForm({ node, onChange, onRenameExit }: Pick<NodePanelProps, 'node' | 'onChange' | 'onRenameExit'>) {
  const t = useT()
  // Keyed by node (key={node.id}), so local form state (a half-typed JSON object, a new sector's name) stays with its node.
  switch (node.type) {
    case 'start':
      return <p className="hint">{t('panel.startHelp')}</p>
    case 'end':
      return <p className="hint">{t('panel.endHelp')}</p>
    case 'message':
      return <MessageForm key={node.id} onRenameExit={onRenameExit} data={node.data as MessageData} onChange={onChange} />
    case 'question':
      return <QuestionForm key={node.id} onRenameExit={onRenameExit} data={node.data as QuestionData} onChange={onChange} />
    case 'condition':
      return <ConditionForm key={node.id} onRenameExit={onRenameExit} data={node.data as ConditionData} onChange={onChange} />
    case 'setVariable':
      return <SetVariableForm key={node.id} onRenameExit={onRenameExit} data={node.data as SetVariableData} onChange={onChange} />
    case 'transfer':
      return <TransferForm key={node.id} onRenameExit={onRenameExit} data={node.data as TransferData} onChange={onChange} />
    case 'kanbanMove':
      return <KanbanMoveForm key={node.id} onRenameExit={onRenameExit} data={node.data as KanbanMoveData} onChange={onChange} />
    default:
      return <pre className="code">{JSON.stringify(node.data, null, 2)}</pre>
  }
}
