import { useT } from '../i18n'
import { exitsOf, hasEntry, type FlowNode, type Graph } from '../flow/model'
import { useExitLabel, useNodeTypeName } from '../nodes'
import { Field } from '../forms/fields'

export interface NextNodesProps {
  node: FlowNode
  graph: Graph
  /** Connects the exit (`null` for the unnamed one) to `target`, or disconnects it when `target` is null. */
  onLink(exit: string | null, target: string | null): void
}

/**
 * One "Next node" select per exit of the node, showing where the exit leads and changing it: the
 * way to connect nodes with the keyboard (the canvas connects by dragging or clicking handles).
 */
export function NextNodes({ node, graph, onLink }: NextNodesProps) {
  const t = useT()
  const typeName = useNodeTypeName()
  const exitLabel = useExitLabel()
  const exits = exitsOf(node.type, node.data)
  if (exits.length === 0) return null
  const targets = graph.nodes.filter((n) => hasEntry(n.type))
  const name = (n: FlowNode) => `${typeName(n.type ?? '')} · ${n.id}`
  return (
    <fieldset className="group next-nodes" data-testid="next-nodes">
      <legend>{t('next.title')}</legend>
      {exits.map((exit, i) => {
        const edge = graph.edges.find((e) => e.source === node.id && (e.sourceHandle ?? null) === exit.id)
        const label = exit.id === null ? t('next.node') : t('next.nodeOf', { exit: exitLabel(node, exit) })
        return (
          // Keyed by place too: while an id being typed is another exit's, two exits share it.
          <Field key={`${i}:${exit.id ?? ''}`} label={label}>
            <select value={edge?.target ?? ''} onChange={(e) => onLink(exit.id, e.target.value || null)}>
              <option value="">{t('next.none')}</option>
              {targets.map((n) => (
                <option key={n.id} value={n.id}>
                  {name(n)}
                </option>
              ))}
            </select>
          </Field>
        )
      })}
    </fieldset>
  )
}
