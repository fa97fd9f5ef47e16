import { langOf, type Lang, type Theme } from '../shared/i18n'

export type { Lang, Theme }

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
  const lang = langOf(decodeURIComponent(match?.[1] ?? pathname.split('/')[2] ?? ''))
  const theme: Theme = new URLSearchParams(search).get('theme') === 'dark' ? 'dark' : 'light'
  const flowPart = match?.[2] ? decodeURIComponent(match[2]) : undefined
  return { lang, theme, flowId: flowPart && UUID.test(flowPart) ? flowPart.toLowerCase() : undefined }
}
