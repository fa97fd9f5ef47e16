import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { dirname, extname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Type, type FastifyPluginAsyncTypebox, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import Negotiator from 'negotiator'
import { ErrorResponse } from '../schemas.js'
import { dashboardPageHeaders, editorPageHeaders, useSecurityHeaders } from '../security-headers.js'

/** The web front ends' production build (`npm run build:web`), beside the compiled service in `dist/`. */
export function defaultWebDir(): string {
  // This file runs from src/ (tests) or dist/src/ (the build); the package root holds package.json.
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir)
  return join(dir, 'dist', 'web')
}

// Source maps are written beside the build for maintainers and never served.
const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
}
/** Written compressed by web/build.mjs beside the file itself, best first. */
const ENCODINGS = [
  { name: 'br', suffix: '.br' },
  { name: 'gzip', suffix: '.gz' },
] as const

/** Built asset names: hashed by Vite, so they never change and may be cached for a year. */
const ASSET_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/

const notBuilt = (what: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Not built</title></head>
<body style="font-family: system-ui, sans-serif; margin: 3em">
<h1>The ${what} is not available</h1>
<p>This service has no build of its web front ends. Build them with <code>npm run build:web</code>
(<code>npm install</code>, <code>npm start</code> and <code>npm test</code> do it too), then reload.</p>
</body></html>
`

// Sent as they are (a Buffer or a string with its own content type), never serialized.
const Html = Type.Unsafe<Buffer | string>({ type: 'string', description: 'text/html' })
const AssetBody = Type.Unsafe<Buffer>({ type: 'string', description: 'JavaScript, CSS, an image or a font' })
const Lang = Type.String({ description: '`en` or `pt`; any other value shows English' })

export interface WebRoutesOptions {
  /** The build; `dist/web` at the package root by default. */
  dir?: string
  /** The sites that may frame the editor (any by default). */
  frameAncestors?: readonly string[]
}

/**
 * Serves the two single-page apps of `web/` and their assets. Pages, not API: left out of the
 * OpenAPI document (docs/embedding.md and docs/dashboard.md describe them).
 * - The embedded editor: `/editor/{lang}/flows/builder/{flowId}?theme=light|dark` and every other
 *   path under `/editor/` answer its page (the app reads the address itself).
 * - The dashboard: `/dashboard/…`; `/` and `/app` lead there.
 * - `/assets/{file}`: both apps' hashed files, brotli or gzip when the browser takes it.
 * Without a build the pages answer 503 and say how to build.
 */
export const webRoutes =
  (options: WebRoutesOptions = {}): FastifyPluginAsyncTypebox =>
  async (app) => {
    const dir = options.dir ?? defaultWebDir()

    const page = (file: string, what: string) => async (_request: FastifyRequest, reply: FastifyReply) => {
      let html: Buffer
      try {
        html = await readFile(join(dir, file))
      } catch {
        return reply.status(503).header('cache-control', 'no-store').header('retry-after', '60').type('text/html; charset=utf-8').send(notBuilt(what))
      }
      return reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(html)
    }

    await app.register(async (scope) => {
      const editor = scope.withTypeProvider<TypeBoxTypeProvider>()
      await useSecurityHeaders(editor, editorPageHeaders(options.frameAncestors ?? ['*']))
      const editorPage = page('editor.html', 'flow editor')
      editor.get(
        '/editor/:lang/flows/builder/:flowId',
        {
          schema: {
            hide: true,
            tags: ['web'],
            summary: 'The embedded flow editor, for an iframe (spec §5.2)',
            description: 'The page posts `{type: "ready"}` to its parent and waits for `{type: "auth", ott}`; see docs/embedding.md.',
            params: Type.Object({ lang: Lang, flowId: Type.String() }),
            querystring: Type.Object({ theme: Type.Optional(Type.String({ description: '`light` (default) or `dark`' })) }),
            response: { 200: Html, 503: Html },
          },
        },
        editorPage,
      )
      // Any other address in the editor is the app's to read (it shows "no flow" for what it does not know).
      editor.get('/editor', { schema: { hide: true, tags: ['web'], summary: 'The editor page', response: { 200: Html, 503: Html } } }, editorPage)
      editor.get('/editor/*', { schema: { hide: true, tags: ['web'], summary: 'The editor page', response: { 200: Html, 503: Html } } }, editorPage)

      // The assets sit in the editor's scope: its pages are framed by other sites, and the
      // cross-origin resource policy it sets lets a host page that isolates itself load them.
      editor.get(
        '/assets/:file',
        {
          schema: {
            hide: true,
            tags: ['web'],
            summary: 'A file of the web build (hashed name, cached for a year)',
            params: Type.Object({ file: Type.String() }),
            response: { 200: AssetBody, 404: ErrorResponse },
          },
        },
        async (request, reply) => {
          const { file } = request.params
          const type = CONTENT_TYPES[extname(file)]
          if (!ASSET_NAME.test(file) || !type) return reply.status(404).send({ statusCode: 404, message: `No asset ${file}`, error: 'Not Found' })
          const path = join(dir, 'assets', file)
          const accepted = new Negotiator(request).encodings(ENCODINGS.map((encoding) => encoding.name))
          for (const encoding of ENCODINGS) {
            if (!accepted.includes(encoding.name)) continue
            const compressed = await readFile(path + encoding.suffix).catch(() => undefined)
            if (compressed) return assetReply(reply.header('content-encoding', encoding.name), type, compressed)
          }
          const content = await readFile(path).catch(() => undefined)
          if (!content) return reply.status(404).send({ statusCode: 404, message: `No asset ${file}`, error: 'Not Found' })
          return assetReply(reply, type, content)
        },
      )
    })

    await app.register(async (dashboard) => {
      await useSecurityHeaders(dashboard, dashboardPageHeaders)
      const dashboardPage = page('dashboard.html', 'dashboard')
      const schema = { hide: true, tags: ['web'], summary: 'The dashboard page', response: { 200: Html, 503: Html } }
      dashboard.get('/dashboard', { schema }, dashboardPage)
      dashboard.get('/dashboard/*', { schema }, dashboardPage)
      // A browser opening the service lands on the dashboard; API clients never ask for these.
      const toDashboard = { schema: { hide: true, tags: ['web'], summary: 'Leads to the dashboard', response: { 302: Type.Null() } } }
      dashboard.get('/', toDashboard, async (_request, reply) => reply.redirect('/dashboard/', 302))
      dashboard.get('/app', toDashboard, async (_request, reply) => reply.redirect('/dashboard/', 302))
    })
  }

function assetReply(reply: FastifyReply, type: string, content: Buffer): FastifyReply {
  return reply.header('cache-control', 'public, max-age=31536000, immutable').header('vary', 'accept-encoding').type(type).send(content)
}
