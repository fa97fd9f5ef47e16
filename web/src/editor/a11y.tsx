import type { AriaLabelConfig } from '@xyflow/react'
import { useMemo } from 'react'
import { useT } from './i18n'

/** The side panel's element id: the skip link's target. */
export const SIDE_PANEL = 'side-panel'

/** The first stop of the Tab key: straight to the side panel, past the palette and every node and edge. */
export function SkipToPanel({ onOpen }: { onOpen(): void }) {
  const t = useT()
  return (
    <a
      className="skip-link"
      href={`#${SIDE_PANEL}`}
      onClick={(event) => {
        event.preventDefault()
        onOpen()
        requestAnimationFrame(() => document.getElementById(SIDE_PANEL)?.focus())
      }}
    >
      {t('a11y.skipToPanel')}
    </a>
  )
}

/** What React Flow tells screen readers about nodes, edges, controls and the minimap, in the editor's language. */
export function useAriaLabels(): Partial<AriaLabelConfig> {
  const t = useT()
  return useMemo(
    () => ({
      'node.a11yDescription.default': t('a11y.node'),
      'node.a11yDescription.keyboardDisabled': t('a11y.node'),
      'node.a11yDescription.ariaLiveMessage': ({ direction, x, y }) => t('a11y.moved', { direction, x, y }),
      'edge.a11yDescription.default': t('a11y.edge'),
      'controls.ariaLabel': t('a11y.controls'),
      'controls.zoomIn.ariaLabel': t('a11y.zoomIn'),
      'controls.zoomOut.ariaLabel': t('a11y.zoomOut'),
      'controls.fitView.ariaLabel': t('toolbar.fitView'),
      'minimap.ariaLabel': t('a11y.minimap'),
      'handle.ariaLabel': t('a11y.handle'),
    }),
    [t],
  )
}
