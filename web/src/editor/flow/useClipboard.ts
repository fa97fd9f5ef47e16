import { useReactFlow } from '@xyflow/react'
import { useCallback, useRef, useState, type RefObject } from 'react'
import { copySelection, pasteClip, pasteOffset, selectAll, type Clip } from './clipboard'
import type { Graph } from './model'
import { visibleArea, type Box } from './placement'
import { isTyping, useCtrlKeys } from './shortcuts'

type Command = 'copy' | 'paste' | 'duplicate' | 'selectAll'

export interface Clipboard extends Record<Command, () => void> {
  canCopy: boolean
  canPaste: boolean
}

const KEYS = new Map<string, Command>([
  ['c', 'copy'],
  ['v', 'paste'],
  ['d', 'duplicate'],
  ['a', 'selectAll'],
])

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

  const copy = useCallback(() => {
    const copied = copySelection(graph)
    if (!copied) return
    setClip(copied)
    pastes.current = 0
  }, [graph])

  const paste = useCallback(() => {
    if (!clip) return
    pastes.current += 1
    const offset = pasteOffset(clip, pastes.current, view())
    change((g) => pasteClip(g, clip, offset))
  }, [change, clip, view])

  const duplicate = useCallback(() => {
    const copied = copySelection(graph)
    if (copied) change((g) => pasteClip(g, copied, pasteOffset(copied, 1, view())))
  }, [change, graph, view])

  // Selecting is not an edit: undo skips it.
  const selectEverything = useCallback(() => change(selectAll, false), [change])

  const commands: Record<Command, () => void> = { copy, paste, duplicate, selectAll: selectEverything }
  useCtrlKeys((event, key) => {
    const command = KEYS.get(key)
    if (!command || event.shiftKey || event.altKey || isTyping(event.target)) return
    // Text the user selected (a problem's message, a node id) copies as text.
    if (command === 'copy' && !(window.getSelection()?.isCollapsed ?? true)) return
    event.preventDefault()
    commands[command]()
  })

  return { ...commands, canCopy: graph.nodes.some((n) => n.selected && n.type !== 'start'), canPaste: clip !== undefined }
}
