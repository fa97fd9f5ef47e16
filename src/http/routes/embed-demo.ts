import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { AppError } from '../../errors.js'
import { Uuid, errorResponses } from '../schemas.js'
import { embedDemoPageHeaders, useSecurityHeaders } from '../security-headers.js'

/**
 * A demo of the customer's side of the embed (spec §5.2), for trying the editor locally: a page
 * that plays the customer's frontend, and one route that plays the customer's backend. Enabled by
 * `EMBED_DEMO` (on by default in the embedded setup only).
 */

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>flowd — embedded editor demo</title>
<link rel="stylesheet" href="/embed-demo/demo.css">
</head>
<body>
<header>
  <h1>Embedded editor demo</h1>
  <p>This page plays your application. Its backend route <code>POST /embed-demo/ott</code> plays
  your backend: it calls <code>POST /auth/iframe-token</code> with the OAuth client's credentials
  (in your application they live in the backend's configuration, never in the browser). The page
  then loads the editor in an iframe and sends it the one-time token.</p>
</header>
<form id="embed">
  <label>Client id <input name="clientId" required pattern="[0-9a-fA-F-]{36}" autocomplete="off"></label>
  <label>Client secret <input name="clientSecret" type="password" required autocomplete="off"></label>
  <label>Flow id <input name="flowId" required pattern="[0-9a-fA-F-]{36}" autocomplete="off"></label>
  <label>Language <select name="lang"><option value="en">English</option><option value="pt">Português</option></select></label>
  <label>Theme <select name="theme"><option value="light">Light</option><option value="dark">Dark</option></select></label>
  <button type="submit">Open the editor</button>
</form>
<p id="status" role="status"></p>
<ol id="messages" aria-label="Messages from the editor"></ol>
<div id="frame"></div>
<script type="module" src="/embed-demo/demo.js"></script>
</body>
</html>
`

const STYLE = `:root { color-scheme: light dark; --text: #1d2330; --muted: #5a6272; --surface: #ffffff; --page: #f4f6fa; --border: #c8cdd8; --accent: #2457c5; --on-accent: #ffffff; }
@media (prefers-color-scheme: dark) {
  :root { --text: #e6e9f0; --muted: #a9b0bf; --surface: #1b2130; --page: #11151f; --border: #3a4357; --accent: #7aa2ff; --on-accent: #0b1020; }
}
* { box-sizing: border-box; }
body { font-family: system-ui, sans-serif; margin: 0; padding: 24px; color: var(--text); background: var(--page); line-height: 1.5; }
header { max-width: 62em; }
h1 { font-size: 1.5rem; margin: 0 0 .25em; }
header p { color: var(--muted); margin: 0; }
code { font-family: ui-monospace, monospace; font-size: .9em; background: var(--surface); border: 1px solid var(--border); border-radius: 4px; padding: 0 .3em; }
form { display: flex; flex-wrap: wrap; gap: 12px 16px; align-items: end; margin: 20px 0 12px; padding: 16px; background: var(--surface); border: 1px solid var(--border); border-radius: 8px; }
label { display: flex; flex-direction: column; font-size: .875rem; font-weight: 600; gap: 4px; }
input, select { font: inherit; font-weight: 400; color: var(--text); background: var(--page); border: 1px solid var(--border); border-radius: 6px; padding: 6px 8px; }
input { width: 22em; max-width: 100%; }
input:focus-visible, select:focus-visible, button:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
button { font: inherit; font-weight: 600; color: var(--on-accent); background: var(--accent); border: 0; border-radius: 6px; padding: 8px 16px; cursor: pointer; }
#status { min-height: 1.5em; font-weight: 600; margin: 0 0 8px; }
#messages { font-family: ui-monospace, monospace; font-size: .8rem; color: var(--muted); max-height: 8em; overflow: auto; margin: 0 0 12px; padding-left: 2.5em; }
#messages:empty { display: none; }
#frame iframe { display: block; width: 100%; height: 75vh; border: 1px solid var(--border); border-radius: 8px; background: var(--surface); }
`

// The customer's frontend: get an OTT from "its backend", load the editor, answer `ready` with
// `{type: "auth", ott}` sent to the editor's origin only, and show what the editor reports.
const SCRIPT = `const form = document.getElementById('embed')
const status = document.getElementById('status')
const list = document.getElementById('messages')
const editorBase = document.body.dataset.editorBase || '/editor'
for (const [name, value] of new URLSearchParams(location.search)) {
  if (form.elements[name] && name !== 'clientSecret') form.elements[name].value = value
}
let current
window.addEventListener('message', (event) => {
  if (!current || event.source !== current.frame.contentWindow || event.origin !== current.origin) return
  const data = event.data
  if (!data || typeof data.type !== 'string') return
  const item = document.createElement('li')
  item.textContent = JSON.stringify(data)
  list.append(item)
  if (data.type === 'ready') current.frame.contentWindow.postMessage({ type: 'auth', ott: current.ott }, current.origin)
  if (data.type === 'authenticated') status.textContent = 'The editor is signed in.'
  if (data.type === 'error') status.textContent = 'The editor reported an error: ' + data.message
})
form.addEventListener('submit', async (event) => {
  event.preventDefault()
  const values = Object.fromEntries(new FormData(form))
  status.textContent = 'Getting a one-time token…'
  const response = await fetch('/embed-demo/ott', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ clientId: values.clientId, clientSecret: values.clientSecret }),
  })
  const body = await response.json()
  if (!response.ok) {
    status.textContent = 'No token: ' + body.message
    return
  }
  const src = new URL(editorBase + '/' + values.lang + '/flows/builder/' + values.flowId + '?theme=' + values.theme, location.href)
  const frame = document.createElement('iframe')
  frame.title = 'Flow editor'
  frame.src = src.href
  current = { frame, origin: src.origin, ott: body.ott }
  list.replaceChildren()
  document.getElementById('frame').replaceChildren(frame)
  status.textContent = 'Loading the editor…'
})
`

export const embedDemoRoutes =
  (options: { editorUrl: string | undefined }): FastifyPluginAsyncTypebox =>
  async (app) => {
    const page = options.editorUrl ? PAGE.replace('<body>', `<body data-editor-base="${encodeURI(options.editorUrl.replace(/\/$/, ''))}">`) : PAGE
    await useSecurityHeaders(app, embedDemoPageHeaders)
    // A demo page, not API: left out of the OpenAPI document.
    const hidden = { schema: { hide: true } }

    app.get('/embed-demo', hidden, async (_request, reply) => reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(page))
    app.get('/embed-demo/demo.js', hidden, async (_request, reply) => reply.header('cache-control', 'no-cache').type('text/javascript; charset=utf-8').send(SCRIPT))
    app.get('/embed-demo/demo.css', hidden, async (_request, reply) => reply.header('cache-control', 'no-cache').type('text/css; charset=utf-8').send(STYLE))

    app.post(
      '/embed-demo/ott',
      {
        schema: {
          hide: true,
          tags: ['embed demo'],
          summary: "The demo's stand-in for the customer's backend: asks POST /auth/iframe-token for a one-time token",
          body: Type.Object({ clientId: Uuid, clientSecret: Type.String({ minLength: 1, maxLength: 512 }) }),
          response: { 200: Type.Object({ ott: Type.String() }), ...errorResponses(400, 401, 413, 415) },
        },
      },
      async (request) => {
        // Exactly the call a customer's backend makes, through this service's own router.
        const basic = Buffer.from(`${request.body.clientId}:${request.body.clientSecret}`).toString('base64')
        const answer = await app.inject({ method: 'POST', url: '/auth/iframe-token', headers: { authorization: `Basic ${basic}`, 'content-type': 'application/json' }, payload: '{}' })
        const body = answer.json() as { ott: string } | { message: string }
        if ('ott' in body) return body
        throw new AppError(answer.statusCode, body.message)
      },
    )
  }
