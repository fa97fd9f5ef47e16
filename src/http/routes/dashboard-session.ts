import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import type { Kysely } from 'kysely'
import {
  apiKeyHashOf,
  consumeSignInLink,
  csrfTokenOf,
  endDashboardSession,
  findDashboardSession,
  startDashboardSession,
  type DashboardSession,
} from '../../auth/dashboard-sessions.js'
import type { EditorAuth } from '../../auth/editor-auth.js'
import { BadRequestError, ForbiddenError, NotFoundError, UnauthorizedError } from '../../errors.js'
import { findActiveApiKeyByHash } from '../../projections/api-keys.js'
import { findWorkspace } from '../../projections/workspaces.js'
import type { Database } from '../../store/database.js'
import { clearSessionCookie, dashboardSessionOf, sessionTokenOf, setSessionCookie } from '../dashboard-session.js'
import { security } from '../openapi.js'
import { EmptyBody, errorResponses, Uuid } from '../schemas.js'
import { openApiTag } from './auth.js'

export { openApiTag }

const SessionInfo = Type.Object(
  {
    csrfToken: Type.String({ description: 'send it as `X-CSRF-Token` on every request of this session that changes anything' }),
    expiresAt: Type.String({ format: 'date-time' }),
    apiKeyId: Uuid,
    role: Type.Union([Type.Literal('organization-admin'), Type.Literal('workspace')]),
    organizationId: Uuid,
    workspaceId: Uuid,
  },
  { description: 'The signed-in session: what its API key reaches, and its CSRF token' },
)

// One of the two; a body with both or neither is refused in the handler (a schema union would
// let the validator strip the extra property instead).
const SignIn = Type.Object(
  {
    apiKey: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'an organization-admin or workspace API key (`wh_…`)' })),
    link: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'the token of a one-time sign-in link (`/dashboard/sign-in#token=…`)' })),
  },
  { description: 'exactly one of `apiKey` and `link`', examples: [{ apiKey: 'wh_…' }] },
)

const BAD_SIGN_IN = 'Invalid API key or sign-in link'

const infoOf = (session: DashboardSession, token: string) => ({
  csrfToken: csrfTokenOf(token),
  expiresAt: session.expiresAt.toISOString(),
  apiKeyId: session.principal.apiKeyId,
  role: session.principal.role,
  organizationId: session.principal.organizationId,
  workspaceId: session.principal.workspaceId,
})

/**
 * The dashboard's sign-in (docs/dashboard.md): an API key, or a one-time link, buys a short-lived
 * session in an `HttpOnly`, `SameSite=Strict` cookie; the key itself never reaches the browser's
 * storage. The session then calls `/v1` as its key would, with its CSRF token on every write.
 */
export const routes =
  (deps: { db: Kysely<Database>; editorAuth: EditorAuth; now(): Date }): FastifyPluginAsyncTypebox =>
  async (app) => {
    // The routes that act in a session find it before anything else (so no credentials is 401
    // whatever the body), the CSRF and origin checks included.
    const signedIn = new WeakMap<FastifyRequest, { session: DashboardSession; token: string }>()
    const requireSession = async (request: FastifyRequest) => {
      const found = await dashboardSessionOf(deps.db, request, deps.now())
      if (!found) throw new UnauthorizedError('Not signed in')
      signedIn.set(request, found)
    }
    const sessionOf = (request: FastifyRequest) => signedIn.get(request)!

    app.addHook('onSend', async (_request, reply) => {
      void reply.header('cache-control', 'no-store')
    })

    app.post(
      '/auth/session',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'signInToDashboard',
          summary: 'Sign in to the dashboard with an API key or a one-time sign-in link',
          description:
            'Answers the session and sets it in the `flowd_session` cookie (`HttpOnly`, `SameSite=Strict`, `Secure` over HTTPS), valid 8 hours. A link works once, within 24 hours of being printed; a revoked key ends its sessions.',
          security: [],
          body: SignIn,
          response: { 201: SessionInfo, ...errorResponses(400, 401, 413, 415) },
        },
      },
      async (request, reply) => {
        const now = deps.now()
        const { apiKey, link } = request.body
        if ((apiKey === undefined) === (link === undefined)) throw new BadRequestError('body must have exactly one of apiKey and link')
        const keyHash = apiKey !== undefined ? apiKeyHashOf(apiKey) : await consumeSignInLink(deps.db, link!, now)
        if (!keyHash || !(await findActiveApiKeyByHash(deps.db, keyHash))) throw new UnauthorizedError(BAD_SIGN_IN)
        const started = await startDashboardSession(deps.db, keyHash, now)
        const session = await findDashboardSession(deps.db, started.token, now)
        if (!session) throw new UnauthorizedError(BAD_SIGN_IN)
        setSessionCookie(request, reply, started.token)
        return reply.status(201).send(infoOf(session, started.token))
      },
    )

    app.get(
      '/auth/session',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'getDashboardSession',
          summary: 'The dashboard session of this browser',
          description: 'Answers the session of the `flowd_session` cookie with its CSRF token (a reloaded page asks here); 401 when there is none or it has ended.',
          security: security.dashboardSession,
          response: { 200: SessionInfo, ...errorResponses(401, 403) },
        },
        onRequest: requireSession,
      },
      async (request) => {
        const { session, token } = sessionOf(request)
        return infoOf(session, token)
      },
    )

    app.delete(
      '/auth/session',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'signOutOfDashboard',
          summary: 'Sign out: end the dashboard session',
          description:
            'Ends the session on the server (every tab, and every editor it signed in) and clears the cookie. Needs `X-CSRF-Token`. Without a live session: 401, and the cookie is cleared all the same.',
          security: security.dashboardSession,
          response: { 204: EmptyBody, ...errorResponses(401, 403) },
        },
        onRequest: async (request, reply) => {
          // A stale cookie is cleared even though the answer is 401.
          if (sessionTokenOf(request)) clearSessionCookie(request, reply)
          await requireSession(request)
        },
      },
      async (request, reply) => {
        await endDashboardSession(deps.db, sessionOf(request).token, deps.now())
        clearSessionCookie(request, reply)
        return reply.status(204).send()
      },
    )

    app.post(
      '/auth/session/editor-token',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'createDashboardEditorToken',
          summary: 'A one-time token that signs the editor in for a workspace the session reaches',
          description:
            "The dashboard's own editor sign-in, without an OAuth client: the token goes to the editor as `{type: \"auth\", ott}`, like one from `POST /auth/iframe-token`. The editor's session ends with the dashboard's. Needs `X-CSRF-Token`.",
          security: security.dashboardSession,
          body: Type.Object({ workspaceId: Uuid }, { additionalProperties: false, examples: [{ workspaceId: '0190a0b0-0000-7000-8000-0000000000f1' }] }),
          response: { 200: Type.Object({ ott: Type.String() }), ...errorResponses(400, 401, 403, 404, 413, 415) },
        },
        onRequest: requireSession,
      },
      async (request) => {
        const found = sessionOf(request)
        const { principal } = found.session
        const workspace = await findWorkspace(deps.db, request.body.workspaceId)
        if (!workspace || workspace.organization_id !== principal.organizationId) throw new NotFoundError('Workspace not found')
        if (principal.role !== 'organization-admin' && workspace.id !== principal.workspaceId) throw new ForbiddenError('This API key reaches only its own workspace')
        return { ott: await deps.editorAuth.issueDashboardOneTimeToken(found.session.id, { organizationId: workspace.organization_id, workspaceId: workspace.id }) }
      },
    )
  }
