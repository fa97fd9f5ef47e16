import { api, unwrap } from '../../api'
import type { Flow, WorkspaceDetail } from './api-types'

const LARGEST_PAGE = 100

/** One workspace the session reaches, with its time zone; undefined when there is none such. */
export async function findWorkspace(id: string): Promise<WorkspaceDetail | undefined> {
  const call = api.GET('/v1/workspaces/{id}', { params: { path: { id } } })
  if ((await call).response.status === 404) return undefined
  return unwrap(call)
}

/** The workspace's flows (the first hundred, newest first), for the editor's pickers. */
export async function flowsOf(workspaceId: string): Promise<Flow[]> {
  const found = await unwrap(api.GET('/v1/flows', { params: { query: { workspaceId, size: LARGEST_PAGE, orderBy: 'createdAt', direction: 'DESC' } } }))
  return found.content
}
