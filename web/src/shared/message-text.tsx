// Conversation text as the dashboard's transcripts and the editor's test panel show it.

import { Fragment, type ReactNode } from 'react'

const URL_IN_TEXT = /(https?:\/\/[^\s<>"']+[^\s<>"'.,;:!?)\]])/g

/** `url` when it is an http(s) address, so text from a conversation or a flow never becomes a script link. */
export function safeUrl(url: string): string | undefined {
  try {
    const parsed = new URL(url)
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.toString() : undefined
  } catch {
    return undefined
  }
}

/** An external link, opened in a new tab; an unsafe address stays plain text. */
export function ExternalLink({ href, children }: { href: string; children?: ReactNode }) {
  const safe = safeUrl(href)
  if (!safe) return <span className="mono">{children ?? href}</span>
  return (
    <a href={safe} target="_blank" rel="noreferrer noopener">
      {children ?? href}
    </a>
  )
}

/** Message text as a person sees it: its line breaks kept (by the class's CSS) and its web addresses clickable. */
export function MessageText({ text, className = 'chat-text' }: { text: string; className?: string }) {
  const parts = text.split(URL_IN_TEXT)
  return (
    <p className={className}>
      {parts.map((part, index) => (
        // split with a capturing group puts the addresses at odd indexes
        <Fragment key={index}>{index % 2 === 1 ? <ExternalLink href={part} /> : part}</Fragment>
      ))}
    </p>
  )
}

