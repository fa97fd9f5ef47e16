import { useReactFlow } from '@xyflow/react'
import { useEffect, useRef } from 'react'

const FIT_VIEW = { padding: 0.15, maxZoom: 1, duration: 200 }

/**
 * Keeps the canvas on the conversation: the flow is fitted again when the panel opens or closes
 * (the canvas changes width), and the node the session waits at is brought into view when it
 * moves out of sight.
 */
export function useFollowOnCanvas(hidden: boolean, waitingAt: string | null): void {
  const reactFlow = useReactFlow()
  const shown = useRef(!hidden)
  useEffect(() => {
    if (shown.current === !hidden) return
    shown.current = !hidden
    // After the layout has given the canvas its new width.
    const frame = requestAnimationFrame(() => void reactFlow.fitView(FIT_VIEW))
    return () => cancelAnimationFrame(frame)
  }, [hidden, reactFlow])

  useEffect(() => {
    if (hidden || waitingAt === null) return
    const node = reactFlow.getNode(waitingAt)
    const canvas = document.querySelector('.react-flow')?.getBoundingClientRect()
    if (!node || !canvas) return
    const width = node.measured?.width ?? 200
    const height = node.measured?.height ?? 100
    const topLeft = reactFlow.flowToScreenPosition(node.position)
    const bottomRight = reactFlow.flowToScreenPosition({ x: node.position.x + width, y: node.position.y + height })
    const inSight = topLeft.x >= canvas.left && topLeft.y >= canvas.top && bottomRight.x <= canvas.right && bottomRight.y <= canvas.bottom
    if (!inSight) void reactFlow.setCenter(node.position.x + width / 2, node.position.y + height / 2, { duration: 200, zoom: reactFlow.getZoom() })
  }, [hidden, waitingAt, reactFlow])
}
