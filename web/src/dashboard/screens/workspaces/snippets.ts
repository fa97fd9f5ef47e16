import type { Lang, Theme } from '../../../shared/i18n'

/** What the customer's code needs: this service's origin, the OAuth client, the flow and the editor's looks. */
export interface EmbedValues {
  origin: string
  clientId: string
  clientSecret: string
  flowId: string
  lang: Lang
  theme: Theme
}

export const PLACEHOLDER = { clientId: '<CLIENT_ID>', clientSecret: '<CLIENT_SECRET>', flowId: '<FLOW_ID>' } as const

/** The editor's address for a flow (the spec's step 2). */
export const editorUrl = ({ origin, flowId, lang, theme }: Pick<EmbedValues, 'origin' | 'flowId' | 'lang' | 'theme'>): string =>
  `${origin}/editor/${lang}/flows/builder/${flowId}?theme=${theme}`

// Single quotes in the shell: a value holding one is closed, escaped and reopened.
const shellQuoted = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`

/** The customer's backend asks for a one-time token with curl (step 1). */
export const curlSnippet = ({ origin, clientId, clientSecret }: EmbedValues): string =>
  [
    `curl -s -X POST ${shellQuoted(`${origin}/auth/iframe-token`)} \\`,
    `  -u ${shellQuoted(`${clientId}:${clientSecret}`)} \\`,
    `  -H 'content-type: application/json' -d '{}'`,
  ].join('\n')

/** The same call from a Node backend (Node 18+, as an ES module). */
export const nodeSnippet = ({ origin, clientId, clientSecret }: EmbedValues): string =>
  [
    `// Keep the secret on your backend (an environment variable, a secret manager).`,
    `const basic = Buffer.from(${JSON.stringify(`${clientId}:${clientSecret}`)}).toString('base64')`,
    `const response = await fetch(${JSON.stringify(`${origin}/auth/iframe-token`)}, {`,
    `  method: 'POST',`,
    "  headers: { authorization: `Basic ${basic}`, 'content-type': 'application/json' },",
    `  body: '{}',`,
    `})`,
    "if (!response.ok) throw new Error(`iframe-token: ${response.status}`)",
    `const { ott } = await response.json() // valid 60 seconds, for one sign-in`,
  ].join('\n')

/** The iframe on the customer's page (step 2). */
export const iframeSnippet = (values: EmbedValues): string =>
  [
    `<iframe id="flow-editor" title="Flow editor"`,
    `  src="${editorUrl(values)}"`,
    `  style="width:100%;height:80vh;border:0"></iframe>`,
  ].join('\n')

/** The page's side of the handshake (step 3): on `ready`, a fresh token from its backend, posted to the editor's origin only. */
export const hostScriptSnippet = ({ origin }: EmbedValues): string =>
  [
    `<script type="module">`,
    `  const frame = document.getElementById('flow-editor')`,
    `  const editorOrigin = ${JSON.stringify(origin)}`,
    `  window.addEventListener('message', async (event) => {`,
    `    if (event.source !== frame.contentWindow || event.origin !== editorOrigin) return`,
    `    if (event.data?.type === 'ready') {`,
    `      // Your backend route that runs the call above and answers { ott }.`,
    `      const { ott } = await (await fetch('/your-backend/flow-editor-token', { method: 'POST' })).json()`,
    `      frame.contentWindow.postMessage({ type: 'auth', ott }, editorOrigin)`,
    `    }`,
    `  })`,
    `</script>`,
  ].join('\n')
