import { useReactFlow, type ReactFlowInstance } from '@xyflow/react'
import { useEffect, useRef } from 'react'
import { useReadableFit } from '../canvas/fit-view'

/**
 * Keeps the canvas on the conversation: the flow is fitted again when the panel opens or closes
 * (the canvas changes width), and the node the session waits at is brought into view whenever it
 * is out of sight, after such a fit too (a fit at readable zoom may leave it out).
 */
export function useFollowOnCanvas(hidden: boolean, waitingAt: string | null): void {
  const reactFlow = useReactFlow()
  const fit = useReadableFit()
  const shown = useRef(!hidden)
  useEffect(() => {
    const follow = () => {
      if (!hidden && waitingAt !== null) bringIntoView(reactFlow, waitingAt)
    }
    if (shown.current === !hidden) return follow()
    shown.current = !hidden
    // After the layout has given the canvas its new width.
    const frame = requestAnimationFrame(() => void fit().then(follow))
    return () => cancelAnimationFrame(frame)
  }, [hidden, waitingAt, reactFlow, fit])
}

function bringIntoView(reactFlow: ReactFlowInstance, nodeId: string): void {
  const node = reactFlow.getNode(nodeId)
  const canvas = document.querySelector('.react-flow')?.getBoundingClientRect()
  if (!node || !canvas) return
  const width = node.measured?.width ?? 200
  const height = node.measured?.height ?? 100
  const topLeft = reactFlow.flowToScreenPosition(node.position)
  const bottomRight = reactFlow.flowToScreenPosition({ x: node.position.x + width, y: node.position.y + height })
  const inSight = topLeft.x >= canvas.left && topLeft.y >= canvas.top && bottomRight.x <= canvas.right && bottomRight.y <= canvas.bottom
  if (!inSight) void reactFlow.setCenter(node.position.x + width / 2, node.position.y + height / 2, { duration: 200, zoom: reactFlow.getZoom() })
}
