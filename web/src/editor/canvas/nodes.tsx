import { Handle, Position, useUpdateNodeInternals, type NodeProps, type NodeTypes } from '@xyflow/react'
import { createContext, useContext, useEffect } from 'react'
import { useT } from '../i18n'
import { emptyProblems, exitsOf, hasEntry, type FlowNode, type ProblemIndex } from '../flow/model'
import { clip } from '../nodes/node-ui'
import { NODE_TYPES, nodeUiOf, useExitLabel, useNodeTypeName } from '../nodes'

export const ProblemsContext = createContext<ProblemIndex>(emptyProblems())

/** Every node type: its header, a summary, an entry on the left and its exits on the right. */
function FlowNodeView(props: NodeProps<FlowNode>) {
  const t = useT()
  const typeName = useNodeTypeName()
  const exitLabel = useExitLabel()
  const { id, type, data, selected } = props
  const ui = nodeUiOf(type)
  const exits = exitsOf(type, data)
  const problems = useContext(ProblemsContext).byNode.get(id)
  const updateInternals = useUpdateNodeInternals()
  const exitKey = exits.map((e) => e.id ?? '').join('\u0000')
  useEffect(() => updateInternals(id), [id, exitKey, updateInternals])

  const single = exits.length === 1 && exits[0]?.id === null
  return (
    <div className={`flow-node type-${type}${selected ? ' selected' : ''}${problems ? ' has-problems' : ''}`} data-testid={`node-${id}`} data-node-type={type}>
      {hasEntry(type) && <Handle type="target" position={Position.Left} className="entry" />}
      <div className="node-header">
        <span className="node-icon" aria-hidden>
          {ui ? ui.icon : '•'}
        </span>
        <span className="node-type">{typeName(type)}</span>
        <span className="node-id">{id}</span>
      </div>
      <div className="node-body">
        {ui && <ui.Summary data={data} />}
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
          {exits.map((exit, i) => {
            const label = exitLabel(props, exit)
            // Keyed by place too: while an id being typed is another exit's, two exits share it.
            return (
              <li key={`${i}:${exit.id ?? ''}`} className={`exit-row ${exit.kind ?? 'choice'}`}>
                <span title={label}>{clip(label, 36)}</span>
                <Handle type="source" position={Position.Right} id={exit.id ?? undefined} className="exit" />
              </li>
            )
          })}
        </ul>
      )}
    </div>
  )
}

export const nodeTypes: NodeTypes = Object.fromEntries(NODE_TYPES.map((type) => [type, FlowNodeView]))
/** A type the editor does not know still shows, with its edges, and is saved as it was. */
export const UnknownNode = FlowNodeView
