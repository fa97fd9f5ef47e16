import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react'
import { api, unwrap, useSessionCredentials, type SessionInfo } from './api'

type State = { name: 'loading' } | { name: 'signed-out'; expired: boolean } | { name: 'signed-in'; info: SessionInfo }

interface SessionApi {
  state: State
  signIn(credentials: { apiKey: string } | { link: string }): Promise<void>
  signOut(): Promise<void>
}

const SessionContext = createContext<SessionApi | undefined>(undefined)

/**
 * The browser's dashboard session: asks the service whether the cookie holds one (a reloaded page),
 * signs in and out. The CSRF token lives in memory only; the cookie is `HttpOnly`.
 */
export function SessionProvider({ children }: { children: ReactNode }) {
  const [state, setState] = useState<State>({ name: 'loading' })
  const info = state.name === 'signed-in' ? state.info : undefined
  useSessionCredentials(info?.csrfToken, () => setState({ name: 'signed-out', expired: true }))

  useEffect(() => {
    let cancelled = false
    void api.GET('/auth/session').then(({ data, response }) => {
      if (cancelled) return
      setState(response.ok && data ? { name: 'signed-in', info: data } : { name: 'signed-out', expired: false })
    })
    return () => {
      cancelled = true
    }
  }, [])

  const signIn = useCallback(async (credentials: { apiKey: string } | { link: string }) => {
    const signedIn = await unwrap(api.POST('/auth/session', { body: credentials }))
    setState({ name: 'signed-in', info: signedIn })
  }, [])

  const signOut = useCallback(async () => {
    await api.DELETE('/auth/session')
    setState({ name: 'signed-out', expired: false })
  }, [])

  const value = useMemo(() => ({ state, signIn, signOut }), [state, signIn, signOut])
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>
}

export function useSession(): SessionApi {
  const session = useContext(SessionContext)
  if (!session) throw new Error('useSession outside SessionProvider')
  return session
}

/** The signed-in session's info; only under the signed-in screens. */
export function useSignedIn(): SessionInfo {
  const { state } = useSession()
  if (state.name !== 'signed-in') throw new Error('useSignedIn while signed out')
  return state.info
}
