import { nodeGist, nodeLabel, nodeName, type NamedNode } from '../../shared/node-names'
import { usePreferences } from '../preferences'

/** A node as people read it: its label, else its type's name with what it says (`gist`), its id for a tooltip. */
export interface ShownNode {
  id: string
  name: string
  gist?: string
}

/** Each node of a definition by its id, as people read it; an id the definition does not hold stays the id. */
export function useNodeNames(definition: { nodes: readonly NamedNode[] } | undefined): (id: string) => ShownNode {
  const { lang } = usePreferences()
  const byId = new Map((definition?.nodes ?? []).map((node) => [node.id, node]))
  return (id) => {
    const node = byId.get(id)
    if (!node) return { id, name: id }
    return { id, name: nodeName(node, lang), gist: nodeLabel(node) === undefined ? nodeGist(node) : undefined }
  }
}

/** A node's name with its id a hover away, and with `gist` what it says, cut to a line. */
export function NodeName({ node, gist = false }: { node: ShownNode; gist?: boolean }) {
  return (
    <>
      <span className="node-name" title={node.id} data-node-id={node.id}>
        {node.name}
      </span>
      {gist && node.gist && (
        <span className="node-gist" title={node.gist}>
          {node.gist}
        </span>
      )}
    </>
  )
}
