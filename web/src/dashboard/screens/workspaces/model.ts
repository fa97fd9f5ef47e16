import { api, unwrap, type paths } from '../../api'

type ListItem<Path extends keyof paths> = paths[Path] extends { get: { responses: { 200: { content: { 'application/json': { content: (infer Item)[] } } } } } } ? Item : never

export type Workspace = ListItem<'/v1/workspaces'>
export type ApiKey = ListItem<'/v1/api-keys'>
export type OAuthClient = ListItem<'/v1/clients'>
export type Sector = ListItem<'/v1/sectors'>
export type Variable = ListItem<'/v1/variables'>
export type Flow = ListItem<'/v1/flows'>
export type VariableType = Variable['type']
export const VARIABLE_TYPES: readonly VariableType[] = ['string', 'number', 'boolean', 'object']

export const TABS = ['general', 'api-keys', 'embed', 'sectors', 'variables'] as const
export type Tab = (typeof TABS)[number]

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

/**
 * A default value as typed in the form, for the variable's type. What cannot be read as that type
 * goes to the API as typed, so its own message says what is wrong.
 */
export function parseDefaultValue(type: VariableType, text: string): Variable['defaultValue'] {
  if (text.trim() === '') return null
  if (type === 'number') return Number.isFinite(Number(text)) ? Number(text) : text
  if (type === 'boolean') return text === 'true' ? true : text === 'false' ? false : text
  if (type === 'object') {
    try {
      const parsed: unknown = JSON.parse(text)
      return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : text
    } catch {
      return text
    }
  }
  return text
}

/** A stored default value as the form shows it. */
export function formatDefaultValue(value: Variable['defaultValue']): string {
  if (value === null) return ''
  return typeof value === 'string' ? value : JSON.stringify(value)
}
