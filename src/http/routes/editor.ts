import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { dirname, extname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import { ErrorResponse } from '../schemas.js'
import { editorPageHeaders, useSecurityHeaders } from '../security-headers.js'

/** The editor's production build (`npm run build:editor`), beside the compiled service in `dist/`. */
export function defaultEditorDir(): string {
  // This file runs from src/ (tests) or dist/src/ (the build); the package root holds package.json.
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir)
  return join(dir, 'dist', 'editor')
}

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
}

/** Built asset names: hashed by Vite, so they never change and may be cached for a year. */
const ASSET_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/

const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Editor not built</title></head>
<body style="font-family: system-ui, sans-serif; margin: 3em">
<h1>The flow editor is not available</h1>
<p>This service has no build of the embedded editor. Build it with <code>npm run build:editor</code>
(<code>npm install</code>, <code>npm start</code> and <code>npm test</code> do it too), then reload.</p>
</body></html>
`

// Sent as they are (a Buffer or a string with its own content type), never serialized.
const Html = Type.Unsafe<Buffer | string>({ type: 'string', description: 'text/html' })
const AssetBody = Type.Unsafe<Buffer>({ type: 'string', description: 'JavaScript, CSS or a source map' })
const Lang = Type.String({ description: '`en` or `pt`; any other value shows English' })

/**
 * Serves the embedded flow editor: `/editor/{lang}/flows/builder/{flowId}?theme=light|dark` and
 * every other path under `/editor/` answer its page (the app reads the address itself); built
 * assets come from `/editor/assets/`. Without a build the pages answer 503 and say how to build.
 * `frameAncestors`: the sites that may frame it (any by default). Pages, not API: left out of the
 * OpenAPI document (docs/embedding.md describes them).
 */
export const editorRoutes =
  (options: { dir?: string; frameAncestors?: readonly string[] } = {}): FastifyPluginAsyncTypebox =>
  async (app) => {
    const dir = options.dir ?? defaultEditorDir()
    await useSecurityHeaders(app, editorPageHeaders(options.frameAncestors ?? ['*']))

    const page = async (reply: FastifyReply) => {
      let html: Buffer
      try {
        html = await readFile(join(dir, 'index.html'))
      } catch {
        return reply.status(503).header('cache-control', 'no-store').header('retry-after', '60').type('text/html; charset=utf-8').send(NOT_BUILT)
      }
      return reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(html)
    }

    app.get(
      '/editor/:lang/flows/builder/:flowId',
      {
        schema: {
          hide: true,
          tags: ['editor'],
          summary: 'The embedded flow editor, for an iframe (spec §5.2)',
          description: 'The page posts `{type: "ready"}` to its parent and waits for `{type: "auth", ott}`; see README, "Embedded editor".',
          params: Type.Object({ lang: Lang, flowId: Type.String() }),
          querystring: Type.Object({ theme: Type.Optional(Type.String({ description: '`light` (default) or `dark`' })) }),
          response: { 200: Html, 503: Html },
        },
      },
      async (_request, reply) => page(reply),
    )

    app.get(
      '/editor/assets/:file',
      {
        schema: {
          hide: true,
          tags: ['editor'],
          summary: "A file of the editor's build (hashed name, cached for a year)",
          params: Type.Object({ file: Type.String() }),
          response: { 200: AssetBody, 404: ErrorResponse },
        },
      },
      async (request, reply) => {
        const { file } = request.params
        const type = CONTENT_TYPES[extname(file)]
        const content = ASSET_NAME.test(file) && type ? await readFile(join(dir, 'assets', file)).catch(() => undefined) : undefined
        if (!content) return reply.status(404).send({ statusCode: 404, message: `No editor asset ${file}`, error: 'Not Found' })
        return reply.header('cache-control', 'public, max-age=31536000, immutable').type(type!).send(content)
      },
    )

    // Any other address in the editor is the app's to read (it shows "no flow" for what it does not know).
    app.get('/editor', { schema: { hide: true, tags: ['editor'], summary: 'The editor page', response: { 200: Html, 503: Html } } }, async (_request, reply) => page(reply))
    app.get(
      '/editor/*',
      { schema: { hide: true, tags: ['editor'], summary: 'The editor page', response: { 200: Html, 404: ErrorResponse, 503: Html } } },
      async (request, reply) => {
        // A missing asset is a 404, not the page (a script must never receive HTML).
        if (request.url.startsWith('/editor/assets/')) return reply.status(404).send({ statusCode: 404, message: 'No such editor asset', error: 'Not Found' })
        return page(reply)
      },
    )
  }
