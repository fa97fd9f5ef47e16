import { useCallback, useEffect, useRef, useState, type DependencyList } from 'react'

export interface Async<T> {
  data: T | undefined
  error: Error | undefined
  loading: boolean
  /** Runs the load again (after a change); the old data stays shown meanwhile. */
  reload(): void
}

/** Loads `load()` when `deps` change; a slower earlier load never overwrites a later one. */
export function useAsync<T>(load: () => Promise<T>, deps: DependencyList): Async<T> {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({ loading: true })
  const generation = useRef(0)
  const loadRef = useRef(load)
  loadRef.current = load
  const run = useCallback(() => {
    const mine = ++generation.current
    setState((previous) => ({ ...previous, loading: true }))
    loadRef.current().then(
      (data) => mine === generation.current && setState({ data, loading: false }),
      (error: unknown) => mine === generation.current && setState({ error: error instanceof Error ? error : new Error(String(error)), loading: false }),
    )
  }, [])
  // eslint-disable-next-line react-hooks/exhaustive-deps
  useEffect(run, deps)
  return { data: state.data, error: state.error, loading: state.loading, reload: run }
}
