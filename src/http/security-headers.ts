import helmet, { type FastifyHelmetOptions } from '@fastify/helmet'
import type { FastifyInstance } from 'fastify'

/**
 * The security headers of the service's HTML pages (the embedded editor, the dashboard, the API
 * reference and the embed demo), set by `@fastify/helmet` in the scope of each page's plugin only: the JSON API's
 * answers carry none of them. Helmet adds its usual headers (nosniff, no-referrer, no X-Powered-By, …) to
 * each page; the content security policy is written out here for each.
 */

// Sent only over HTTPS by browsers; without includeSubDomains, the customer's other hosts are left alone.
const hsts = { maxAge: 180 * 24 * 3600, includeSubDomains: false }

/**
 * The editor: only its own scripts, styles and API. It is framed by the customer's sites, so
 * `frame-ancestors` (EDITOR_FRAME_ANCESTORS, any site by default: the one-time token decides who
 * gets in, not the framing origin) replaces X-Frame-Options, which cannot name a list of sites.
 */
export const editorPageHeaders = (frameAncestors: readonly string[]): FastifyHelmetOptions => ({
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'"],
      // React Flow positions nodes with inline styles.
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", 'data:'],
      connectSrc: ["'self'"],
      objectSrc: ["'none'"],
      baseUri: ["'none'"],
      formAction: ["'none'"],
      frameAncestors: [...frameAncestors],
    },
  },
  frameguard: false,
  // A host page that isolates itself (Cross-Origin-Embedder-Policy) may still frame the editor.
  crossOriginResourcePolicy: { policy: 'cross-origin' },
  hsts,
})

/**
 * The dashboard: only its own scripts (no inline script), styles and API; it frames the editor,
 * which is on the same origin, and nothing frames it.
 */
export const dashboardPageHeaders: FastifyHelmetOptions = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'"],
      // React sets style properties on elements (charts, the board's colours).
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", 'data:'],
      connectSrc: ["'self'"],
      frameSrc: ["'self'"],
      objectSrc: ["'none'"],
      baseUri: ["'none'"],
      formAction: ["'self'"],
      frameAncestors: ["'self'"],
    },
  },
  frameguard: { action: 'sameorigin' },
  hsts,
}

/** The API reference (Swagger UI at /docs): its own files, and "Try it out" calls to this service. */
export const docsPageHeaders: FastifyHelmetOptions = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'"],
      // Swagger UI sets style attributes on its elements.
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", 'data:'],
      fontSrc: ["'self'", 'data:'],
      connectSrc: ["'self'"],
      objectSrc: ["'none'"],
      baseUri: ["'self'"],
      formAction: ["'self'"],
      frameAncestors: ["'self'"],
    },
  },
  hsts,
}

/** The embed demo plays a customer's page: it frames the editor, wherever EDITOR_URL puts it. */
export const embedDemoPageHeaders: FastifyHelmetOptions = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      frameSrc: ['*'],
      objectSrc: ["'none'"],
      baseUri: ["'none'"],
      frameAncestors: ["'self'"],
    },
  },
  hsts,
}

/** Sets `headers` on every answer of the plugin scope `app` (its routes and their errors). */
export async function useSecurityHeaders(app: FastifyInstance, headers: FastifyHelmetOptions): Promise<void> {
  await app.register(helmet, headers)
}
