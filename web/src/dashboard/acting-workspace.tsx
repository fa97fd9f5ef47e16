import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react'
import { useLocation, useSearch } from 'wouter'
import { api, unwrap, useActingWorkspaceHeader, type paths } from './api'
import { isUuid } from './components/address'
import { useAsync, type Async } from './components/async'
import { useSignedIn } from './session'

interface ActingWorkspace {
  /** The workspace every screen works in. */
  workspaceId: string
  /** Works in another workspace of the organization (an organization-admin key's session only). */
  choose(workspaceId: string): void
  /** The organization's workspaces the session reaches (the first hundred), for the switcher. */
  workspaces: Async<Workspace[]>
  /** The address of `path` showing a record of `workspaceId`: following it chooses that workspace. */
  addressOf(path: string, workspaceId: string): string
}

type Workspace = paths['/v1/workspaces']['get']['responses'][200]['content']['application/json']['content'][number]

const ActingWorkspaceContext = createContext<ActingWorkspace | undefined>(undefined)
const LARGEST_PAGE = 100
/** The address's query parameter naming the workspace a screen shows. */
const WORKSPACE_PARAM = 'workspace'

/**
 * Which workspace the signed-in dashboard works in: the key's own, or for an organization-admin key
 * any workspace of its organization, chosen in the header and kept for the browser tab's session.
 * The API reads the choice from `X-Workspace-Id` on every call.
 *
 * Outside the key's own workspace the address names the chosen one (`?workspace=`), so that an
 * address copied into another tab or sent to a colleague opens the same flow or session rather
 * than a not-found in the key's own workspace.
 */
export function ActingWorkspaceProvider({ children }: { children: ReactNode }) {
  const info = useSignedIn()
  const admin = info.role === 'organization-admin'
  const remembered = `flowd.workspace.${info.apiKeyId}`
  const [location, navigate] = useLocation()
  const search = useSearch()
  const inAddress = new URLSearchParams(search).get(WORKSPACE_PARAM)
  const named = admin && inAddress && isUuid(inAddress) ? inAddress : null
  const [chosen, setChosen] = useState(() => named ?? (admin ? sessionStorage.getItem(remembered) : null) ?? info.workspaceId)
  const workspaceId = admin ? chosen : info.workspaceId
  // Set while rendering, so the first call of any screen below already carries it.
  useActingWorkspaceHeader(workspaceId === info.workspaceId ? undefined : workspaceId)
  const workspaces = useAsync(async () => (await unwrap(api.GET('/v1/workspaces', { params: { query: { size: LARGEST_PAGE } } }))).content, [])

  /** The address of this screen naming `id`, or naming none when `id` is the key's own. */
  const addressIn = useCallback(
    (id: string) => {
      const query = new URLSearchParams(search)
      if (id === info.workspaceId) query.delete(WORKSPACE_PARAM)
      else query.set(WORKSPACE_PARAM, id)
      return query.size ? `${location}?${query}` : location
    },
    [location, search, info.workspaceId],
  )
  const choose = useCallback(
    (id: string) => {
      sessionStorage.setItem(remembered, id)
      setChosen(id)
      navigate(addressIn(id), { replace: true })
    },
    [remembered, navigate, addressIn],
  )
  useEffect(() => {
    // An address naming another workspace (a link followed, the back button) works in it; one
    // naming none, reached by the screens' own links, is given the chosen workspace's name.
    if (named && named !== workspaceId) {
      sessionStorage.setItem(remembered, named)
      setChosen(named)
    } else if (admin && !named && workspaceId !== info.workspaceId) {
      navigate(addressIn(workspaceId), { replace: true })
    }
  }, [named, workspaceId, admin, remembered, navigate, addressIn, info.workspaceId])
  const addressOf = useCallback(
    (path: string, recordWorkspaceId: string) => (recordWorkspaceId === info.workspaceId ? path : `${path}?${WORKSPACE_PARAM}=${recordWorkspaceId}`),
    [info.workspaceId],
  )
  const value = useMemo(() => ({ workspaceId, choose, workspaces, addressOf }), [workspaceId, choose, workspaces, addressOf])
  return <ActingWorkspaceContext.Provider value={value}>{children}</ActingWorkspaceContext.Provider>
}

export function useActingWorkspace(): ActingWorkspace {
  const acting = useContext(ActingWorkspaceContext)
  if (!acting) throw new Error('useActingWorkspace outside ActingWorkspaceProvider')
  return acting
}
