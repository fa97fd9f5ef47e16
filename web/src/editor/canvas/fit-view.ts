import { getViewportForBounds, useReactFlow, useStoreApi, type FitViewOptions } from '@xyflow/react'
import { useCallback } from 'react'

// The bottom strip stays clear for the zoom controls (bottom left) and the minimap (bottom right:
// at most 100 px high, 15 px from the edge), so neither covers a node or its exits.
const PADDING = { top: 32, right: 32, bottom: 130, left: 32 }
const ZOOM = { min: 0.6, max: 1 }

/**
 * How the canvas fits a flow into view: never smaller than readable text (0.6), never larger than
 * life, clear of the controls and the minimap.
 */
export const READABLE_FIT_VIEW = {
  padding: { top: `${PADDING.top}px`, right: `${PADDING.right}px`, bottom: `${PADDING.bottom}px`, left: `${PADDING.left}px` },
  minZoom: ZOOM.min,
  maxZoom: ZOOM.max,
} as const satisfies FitViewOptions

/**
 * Fits the flow into the canvas as READABLE_FIT_VIEW says. A flow wider than the canvas at
 * readable text is shown from its start, its left end (flows read left to right), and the rest
 * is panned to.
 */
export function useReadableFit(): (duration?: number) => Promise<void> {
  const reactFlow = useReactFlow()
  const store = useStoreApi()
  return useCallback(
    async (duration = 0) => {
      const nodes = reactFlow.getNodes()
      const { width, height } = store.getState()
      if (nodes.length === 0 || width === 0) return
      const bounds = reactFlow.getNodesBounds(nodes)
      const fitted = getViewportForBounds(bounds, width, height, ZOOM.min, ZOOM.max, READABLE_FIT_VIEW.padding)
      const tooWide = bounds.width * fitted.zoom > width - PADDING.left - PADDING.right
      await reactFlow.setViewport(tooWide ? { ...fitted, x: PADDING.left - bounds.x * fitted.zoom } : fitted, { duration })
    },
    [reactFlow, store],
  )
}
