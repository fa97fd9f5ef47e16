import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react'
import { api, unwrap, useActingWorkspaceHeader, type paths } from './api'
import { useAsync, type Async } from './components/async'
import { useSignedIn } from './session'

interface ActingWorkspace {
  /** The workspace every screen works in. */
  workspaceId: string
  /** Works in another workspace of the organization (an organization-admin key's session only). */
  choose(workspaceId: string): void
  /** The organization's workspaces the session reaches (the first hundred), for the switcher. */
  workspaces: Async<Workspace[]>
}

type Workspace = paths['/v1/workspaces']['get']['responses'][200]['content']['application/json']['content'][number]

const ActingWorkspaceContext = createContext<ActingWorkspace | undefined>(undefined)
const LARGEST_PAGE = 100

/**
 * Which workspace the signed-in dashboard works in: the key's own, or for an organization-admin key
 * any workspace of its organization, chosen in the header and kept for the browser tab's session.
 * The API reads the choice from `X-Workspace-Id` on every call.
 */
export function ActingWorkspaceProvider({ children }: { children: ReactNode }) {
  const info = useSignedIn()
  const remembered = `flowd.workspace.${info.apiKeyId}`
  const [chosen, setChosen] = useState(() => (info.role === 'organization-admin' ? sessionStorage.getItem(remembered) : null) ?? info.workspaceId)
  const workspaceId = info.role === 'organization-admin' ? chosen : info.workspaceId
  // Set while rendering, so the first call of any screen below already carries it.
  useActingWorkspaceHeader(workspaceId === info.workspaceId ? undefined : workspaceId)
  const workspaces = useAsync(async () => (await unwrap(api.GET('/v1/workspaces', { params: { query: { size: LARGEST_PAGE } } }))).content, [])
  const choose = useCallback(
    (id: string) => {
      sessionStorage.setItem(remembered, id)
      setChosen(id)
    },
    [remembered],
  )
  const value = useMemo(() => ({ workspaceId, choose, workspaces }), [workspaceId, choose, workspaces])
  return <ActingWorkspaceContext.Provider value={value}>{children}</ActingWorkspaceContext.Provider>
}

export function useActingWorkspace(): ActingWorkspace {
  const acting = useContext(ActingWorkspaceContext)
  if (!acting) throw new Error('useActingWorkspace outside ActingWorkspaceProvider')
  return acting
}
