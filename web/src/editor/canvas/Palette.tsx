import { useLang, useT } from '../i18n'
import type { NodeType } from '../flow-definition'
import { NODE_TYPES, nodeUis } from '../nodes'

export const DRAG_TYPE = 'application/x-flowd-node'

/** The node types to add: click adds one in the middle of the view, drag drops one where it lands. */
export function Palette({ onAdd, hasStart }: { onAdd(type: NodeType): void; hasStart: boolean }) {
  const t = useT()
  const lang = useLang()
  return (
    <aside className="palette" aria-label={t('palette.title')}>
      <h2>{t('palette.title')}</h2>
      <p className="hint">{t('palette.hint')}</p>
      {NODE_TYPES.filter((type) => type !== 'start' || !hasStart).map((type) => (
        <button
          key={type}
          type="button"
          className={`palette-item type-${type}`}
          data-testid={`palette-${type}`}
          draggable
          onDragStart={(e) => {
            e.dataTransfer.setData(DRAG_TYPE, type)
            e.dataTransfer.effectAllowed = 'move'
          }}
          onClick={() => onAdd(type)}
        >
          <span className="node-icon" aria-hidden>
            {nodeUis[type].icon}
          </span>
          <span>
            <strong>{nodeUis[type].strings[lang].name}</strong>
            <small>{nodeUis[type].strings[lang].description}</small>
          </span>
        </button>
      ))}
    </aside>
  )
}
