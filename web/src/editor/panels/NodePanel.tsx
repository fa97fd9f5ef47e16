import type { ReactNode } from 'react'
import { useT } from '../i18n'
import type { FlowNode } from '../flow/model'
import type { Problem } from '../flow-definition'
import { nodeUiOf, useNodeTypeName } from '../nodes'

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
  const typeName = useNodeTypeName()
  const type = node.type ?? ''
  const ui = nodeUiOf(type)
  return (
    <div className="node-panel" data-testid="node-panel">
      <h2 className={`type-${type}`}>
        <span className="node-icon" aria-hidden>
          {ui ? ui.icon : '•'}
        </span>{' '}
        {typeName(type)}
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
  const ui = nodeUiOf(node.type)
  // Keyed by node (key={node.id}), so local form state (a half-typed JSON object, a new sector's name) stays with its node.
  if (ui) return <ui.Form key={node.id} onRenameExit={onRenameExit} data={node.data} onChange={onChange} />
  return <pre className="code">{JSON.stringify(node.data, null, 2)}</pre>
}
