import createClient from 'openapi-fetch'
import type { components, paths } from '../../../client/src/schema'

export type { components, paths }
export type Schemas = components['schemas']

/** The JSON body of one of the API's answers (`paths[…]['get']['responses'][200]`). */
export type JsonOf<Response> = Response extends { content: { 'application/json': infer Body } } ? Body : never

/**
 * A failed call, in the service's error shape (`{statusCode, message, error}`). Its message is the
 * service's words; ../shared/api-problems reads them into problems by field, in the person's
 * words (`useProblems` and `useFieldErrors` of components/ui).
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

let csrfToken: string | undefined
let onUnauthorized: () => void = () => {}
let actingWorkspaceId: string | undefined

/** The workspace the `/v1` calls act in (`X-Workspace-Id`); undefined: the signed-in key's own. */
export function useActingWorkspaceHeader(workspaceId: string | undefined): void {
  actingWorkspaceId = workspaceId
}

/** The signed-in session's CSRF token (kept in memory only) and what to do when the session is gone. */
export function useSessionCredentials(token: string | undefined, unauthorized: () => void): void {
  csrfToken = token
  onUnauthorized = unauthorized
}

/**
 * The dashboard's API client: openapi-fetch typed from the service's OpenAPI document, on the same
 * origin with the session cookie; writes carry the CSRF token, and `/v1` calls the workspace the
 * dashboard acts in.
 */
export const api = createClient<paths>({ baseUrl: window.location.origin, credentials: 'same-origin' })
api.use({
  onRequest({ request }) {
    if (!['GET', 'HEAD'].includes(request.method) && csrfToken) request.headers.set('x-csrf-token', csrfToken)
    if (actingWorkspaceId && new URL(request.url).pathname.startsWith('/v1/')) request.headers.set('x-workspace-id', actingWorkspaceId)
    return request
  },
  onResponse({ response, request }) {
    if (response.status === 401 && !new URL(request.url).pathname.startsWith('/auth/session')) onUnauthorized()
    return response
  },
})

type Result<T> = { data?: T; error?: unknown; response: Response }

/** The body of a successful call; an ApiError otherwise. */
export async function unwrap<T>(call: Promise<Result<T>>): Promise<T> {
  const { data, error, response } = await call
  if (!response.ok) {
    const body = error as { message?: unknown } | undefined
    throw new ApiError(response.status, typeof body?.message === 'string' ? body.message : `HTTP ${response.status}`)
  }
  return data as T
}

/** The id a create answered in `Location` (the spec's creates without a body). */
export async function createdId(call: Promise<Result<unknown>>): Promise<string> {
  const { response, error } = await call
  if (!response.ok) {
    const body = error as { message?: unknown } | undefined
    throw new ApiError(response.status, typeof body?.message === 'string' ? body.message : `HTTP ${response.status}`)
  }
  const id = response.headers.get('location')?.split('/').pop()
  if (!id) throw new ApiError(response.status, 'The answer named no new resource')
  return id
}

/** The signed-in session (`GET /auth/session`): what its API key reaches, and its CSRF token. */
export type SessionInfo = paths['/auth/session']['get']['responses'][200]['content']['application/json']

/** A page of a list endpoint (the spec's paging). */
export interface Page<T> {
  content: T[]
  totalElements: number
  totalPages: number
  number: number
  size: number
  first: boolean
  last: boolean
}
