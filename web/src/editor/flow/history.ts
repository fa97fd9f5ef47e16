import type { Graph } from './model'

/** The graph with undo and redo. Edits that share a key within a second (typing) are one step. */
export interface History {
  past: Graph[]
  present: Graph
  future: Graph[]
  lastKey: string | undefined
  lastAt: number
}

export type HistoryAction =
  /** Replaces the graph; `record` false for changes that are not steps (selection, measuring, a drag in progress). */
  | { type: 'change'; update: (graph: Graph) => Graph; record: boolean; key?: string; at: number }
  /** Remembers the present as a step without changing it (before a drag). */
  | { type: 'checkpoint' }
  | { type: 'undo' }
  | { type: 'redo' }
  | { type: 'reset'; graph: Graph }

const LIMIT = 100
const COALESCE_MS = 1000

export const initialHistory = (graph: Graph): History => ({ past: [], present: graph, future: [], lastKey: undefined, lastAt: 0 })

export function historyReducer(state: History, action: HistoryAction): History {
  switch (action.type) {
    case 'change': {
      const next = action.update(state.present)
      if (next === state.present) return state
      if (!action.record) return { ...state, present: next }
      const coalesce = action.key !== undefined && action.key === state.lastKey && action.at - state.lastAt < COALESCE_MS
      const past = coalesce ? state.past : [...state.past, state.present].slice(-LIMIT)
      return { past, present: next, future: [], lastKey: action.key, lastAt: action.at }
    }
    case 'checkpoint':
      return { ...state, past: [...state.past, state.present].slice(-LIMIT), future: [], lastKey: undefined }
    case 'undo': {
      const previous = state.past.at(-1)
      if (!previous) return state
      return { past: state.past.slice(0, -1), present: previous, future: [state.present, ...state.future], lastKey: undefined, lastAt: 0 }
    }
    case 'redo': {
      const [next, ...future] = state.future
      if (!next) return state
      return { past: [...state.past, state.present], present: next, future, lastKey: undefined, lastAt: 0 }
    }
    case 'reset':
      return initialHistory(action.graph)
    default: {
      const exhaustive: never = action
      return exhaustive
    }
  }
}
