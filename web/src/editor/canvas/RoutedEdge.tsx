import { BaseEdge, getSmoothStepPath, type EdgeProps, type EdgeTypes } from '@xyflow/react'
import { createContext, useContext, useMemo } from 'react'
import { routePath } from '../../shared/route-path'
import { routeEdge, type Obstacle } from './edge-route'

/** Every node's box on the canvas, for edges to pass around. */
export const NodeBoxes = createContext<readonly Obstacle[]>([])

/** An edge drawn around the nodes between its exit and its entry (edge-route.ts), else as a step line. */
function RoutedEdge({ id, source, target, sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition, markerEnd, style, interactionWidth }: EdgeProps) {
  const boxes = useContext(NodeBoxes)
  const path = useMemo(() => {
    const route = routeEdge({ x: sourceX, y: sourceY }, { x: targetX, y: targetY }, boxes, source, target)
    return route ? routePath(route, 8) : getSmoothStepPath({ sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition })[0]
  }, [boxes, source, target, sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition])
  return <BaseEdge id={id} path={path} markerEnd={markerEnd} style={style} interactionWidth={interactionWidth} />
}

export const edgeTypes: EdgeTypes = { routed: RoutedEdge }
