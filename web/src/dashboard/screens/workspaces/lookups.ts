import { api, unwrap } from '../../api'
import type { Flow, Workspace } from './api-types'

const LARGEST_PAGE = 100

/** One workspace of the organization; the API reads them only as a list, so this pages through it. */
export async function findWorkspace(id: string): Promise<Workspace | undefined> {
  for (let page = 0; ; page++) {
    const found = await unwrap(api.GET('/v1/workspaces', { params: { query: { page, size: LARGEST_PAGE } } }))
    const workspace = found.content.find((item) => item.id === id)
    if (workspace || found.last || found.content.length === 0) return workspace
  }
}

/** The workspace's flows (the first hundred, newest first), for the editor's pickers. */
export async function flowsOf(workspaceId: string): Promise<Flow[]> {
  const found = await unwrap(api.GET('/v1/flows', { params: { query: { workspaceId, size: LARGEST_PAGE, orderBy: 'createdAt', direction: 'DESC' } } }))
  return found.content
}
