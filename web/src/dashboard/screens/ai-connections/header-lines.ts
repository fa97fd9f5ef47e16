import type { ConnectionHeader } from './api-types'

/** Headers as the form writes them: `Name: value`, one a line. */
export const headerLines = (headers: readonly ConnectionHeader[]): string => headers.map((header) => `${header.name}: ${header.value}`).join('\n')

/**
 * The headers of `text`, one a line, split at the first colon (blank lines left out); undefined
 * when a line has no colon. The service checks names and values.
 */
export function parseHeaderLines(text: string): ConnectionHeader[] | undefined {
  const headers: ConnectionHeader[] = []
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === '') continue
    const colon = line.indexOf(':')
    if (colon < 0) return undefined
    headers.push({ name: line.slice(0, colon).trim(), value: line.slice(colon + 1).trim() })
  }
  return headers
}
