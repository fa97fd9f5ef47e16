import { useReactFlow } from '@xyflow/react'
import { useCallback, useEffect, useRef, useState, type RefObject } from 'react'
import { copySelection, pasteClip, selectAll, type Clip } from '../flow/clipboard'
import type { Graph } from '../flow/model'
import { inside, nodeBounds, visibleArea, type Box } from '../flow/placement'

/** True when keys typed go to a form control: its own copy, paste and select-all stay its own. */
export const isTyping = (target: EventTarget | null) =>
  target instanceof HTMLElement && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName))

// Each paste of the same copy lands this much further down and to the right.
const PASTE_STEP = 40

export interface Clipboard {
  copy(): void
  paste(): void
  duplicate(): void
  selectAll(): void
  canCopy: boolean
  canPaste: boolean
}

/**
 * Copy, paste, duplicate and select-all of the canvas's nodes, by Ctrl/⌘+C, V, D and A outside
 * form fields and text selections, and by the functions it answers (for buttons). Pasted nodes get
 * new ids, keep the edges among them, and land beside the originals or, when those are out of
 * sight, in the middle of the view.
 */
export function useClipboard(graph: Graph, change: (update: (graph: Graph) => Graph, record?: boolean) => void, canvasRef: RefObject<HTMLElement | null>): Clipboard {
  const reactFlow = useReactFlow()
  const [clip, setClip] = useState<Clip>()
  const pastes = useRef(0)

  const view = useCallback((): Box | undefined => {
    const rect = canvasRef.current?.getBoundingClientRect()
    return rect ? visibleArea(rect, reactFlow.screenToFlowPosition) : undefined
  }, [canvasRef, reactFlow])

  const place = useCallback(
    (copied: Clip, times: number) => {
      const step = { x: PASTE_STEP * times, y: PASTE_STEP * times }
      const box = nodeBounds(copied.nodes)
      const visible = view()
      const moved = { ...box, x: box.x + step.x, y: box.y + step.y }
      if (!visible || inside(moved, visible)) return step
      return { x: Math.round(visible.x + visible.width / 2 - box.width / 2 - box.x), y: Math.round(visible.y + visible.height / 2 - box.height / 2 - box.y) }
    },
    [view],
  )

  const copy = useCallback(() => {
    const copied = copySelection(graph)
    if (!copied) return
    setClip(copied)
    pastes.current = 0
  }, [graph])

  const paste = useCallback(() => {
    if (!clip) return
    pastes.current += 1
    const offset = place(clip, pastes.current)
    change((g) => pasteClip(g, clip, offset))
  }, [change, clip, place])

  const duplicate = useCallback(() => {
    const copied = copySelection(graph)
    if (copied) change((g) => pasteClip(g, copied, place(copied, 1)))
  }, [change, graph, place])

  // Selecting is not an edit: undo skips it.
  const selectEverything = useCallback(() => change(selectAll, false), [change])

  const keys = useRef({ copy, paste, duplicate, selectAll: selectEverything })
  keys.current = { copy, paste, duplicate, selectAll: selectEverything }
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (!(event.ctrlKey || event.metaKey) || event.shiftKey || event.altKey || isTyping(event.target)) return
      const action = { c: 'copy', v: 'paste', d: 'duplicate', a: 'selectAll' }[event.key.toLowerCase()] as keyof typeof keys.current | undefined
      if (!action) return
      // Text the user selected (a problem's message, a node id) copies as text.
      if (action === 'copy' && !(window.getSelection()?.isCollapsed ?? true)) return
      event.preventDefault()
      keys.current[action]()
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [])

  return { copy, paste, duplicate, selectAll: selectEverything, canCopy: graph.nodes.some((n) => n.selected && n.type !== 'start'), canPaste: clip !== undefined }
}
