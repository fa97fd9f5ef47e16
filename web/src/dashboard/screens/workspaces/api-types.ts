import type { paths } from '../../api'

type ListItem<Path extends keyof paths> = paths[Path] extends { get: { responses: { 200: { content: { 'application/json': { content: (infer Item)[] } } } } } } ? Item : never

export type Workspace = ListItem<'/v1/workspaces'>
/** One workspace as `GET /v1/workspaces/{id}` answers it, with its time zone. */
export type WorkspaceDetail = paths['/v1/workspaces/{id}']['get']['responses'][200]['content']['application/json']
export type ApiKey = ListItem<'/v1/api-keys'>
export type OAuthClient = ListItem<'/v1/clients'>
export type Sector = ListItem<'/v1/sectors'>
export type Variable = ListItem<'/v1/variables'>
/** A workspace secret as the API lists it: its name and dates, never its value. */
export type Secret = ListItem<'/v1/secrets'>
export type Flow = ListItem<'/v1/flows'>
export type VariableType = Variable['type']
export const VARIABLE_TYPES: readonly VariableType[] = ['string', 'number', 'boolean', 'object']
