import type { FastifyReply, FastifyRequest } from 'fastify'
import {
  csrfTokenMatches,
  DASHBOARD_SESSION_TTL_SECONDS,
  findDashboardSession,
  SESSION_COOKIE,
  CSRF_HEADER,
  type DashboardSession,
} from '../auth/dashboard-sessions.js'
import { ForbiddenError } from '../errors.js'
import type { DbOrTrx } from '../store/database.js'

/** Methods that change nothing: they need the cookie only. Every other one needs the CSRF token too. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** The dashboard session's token from the request's cookie, if it has one. */
export const sessionTokenOf = (request: FastifyRequest): string | undefined => {
  const token = request.cookies[SESSION_COOKIE]
  return token && token.length <= 100 ? token : undefined
}

/**
 * The live dashboard session of a request carrying its cookie; undefined without one. A request
 * that changes anything must also carry the session's CSRF token, and no request another site
 * started is taken (`Sec-Fetch-Site`, where the browser sends it): 403 for either.
 */
export async function dashboardSessionOf(db: DbOrTrx, request: FastifyRequest, now: Date): Promise<{ session: DashboardSession; token: string } | undefined> {
  const token = sessionTokenOf(request)
  if (!token) return undefined
  const session = await findDashboardSession(db, token, now)
  if (!session) return undefined
  if (request.headers['sec-fetch-site'] === 'cross-site') throw new ForbiddenError('A dashboard session is not used by requests from other sites')
  const csrf = request.headers[CSRF_HEADER]
  if (!SAFE_METHODS.has(request.method) && !csrfTokenMatches(token, typeof csrf === 'string' ? csrf : undefined)) {
    throw new ForbiddenError('Missing or invalid X-CSRF-Token header for this dashboard session')
  }
  return { session, token }
}

/** Sets the session cookie: never readable by scripts, never sent by another site's request, HTTPS-only over HTTPS. */
export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, token: string): void {
  void reply.setCookie(SESSION_COOKIE, token, {
    path: '/',
    httpOnly: true,
    sameSite: 'strict',
    secure: request.protocol === 'https',
    maxAge: DASHBOARD_SESSION_TTL_SECONDS,
  })
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  void reply.clearCookie(SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'strict', secure: request.protocol === 'https' })
}
