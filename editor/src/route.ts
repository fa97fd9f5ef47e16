export type Lang = 'en' | 'pt'
export type Theme = 'light' | 'dark'

export interface EditorRoute {
  lang: Lang
  theme: Theme
  /** Undefined when the address names no flow (or not a UUID). */
  flowId: string | undefined
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const BUILDER = /\/editor\/([^/]+)\/flows\/builder\/([^/]+)\/?$/

/** Reads `/editor/{lang}/flows/builder/{flowId}?theme=…`; an unknown lang is English, an unknown theme light. */
export function parseRoute(pathname: string, search: string): EditorRoute {
  const match = BUILDER.exec(pathname)
  const langPart = decodeURIComponent(match?.[1] ?? pathname.split('/')[2] ?? '').toLowerCase()
  const lang: Lang = langPart === 'pt' || langPart.startsWith('pt-') ? 'pt' : 'en'
  const theme: Theme = new URLSearchParams(search).get('theme') === 'dark' ? 'dark' : 'light'
  const flowPart = match?.[2] ? decodeURIComponent(match[2]) : undefined
  return { lang, theme, flowId: flowPart && UUID.test(flowPart) ? flowPart.toLowerCase() : undefined }
}
