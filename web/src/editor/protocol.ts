/**
 * The postMessage contract with the host page (the iframe's parent).
 *
 * In:  `{type: "auth", ott}` only; anything else, or anything not from the parent window, is ignored.
 * Out: `ready`, `authenticated`, `dirty`, `saved`, `published`, `error`. Tokens never leave the editor.
 */

export interface AuthMessage {
  type: 'auth'
  ott: string
}

export type EditorMessage =
  | { type: 'ready' }
  | { type: 'authenticated' }
  /** The draft has (`true`) or no longer has (`false`) changes that are not saved: a host may guard its own navigation. */
  | { type: 'dirty'; flowId: string; dirty: boolean }
  | { type: 'saved'; flowId: string; updatedAt: string }
  | { type: 'published'; flowId: string; version: number; publishedAt: string }
  | { type: 'error'; code: ErrorCode; message: string }

export type ErrorCode =
  /** The one-time token was refused (expired, used, unknown). */
  | 'auth_failed'
  /** The session could not be renewed; the host should send a new `auth`. */
  | 'session_expired'
  /** The address names no flow, or the flow is not in the client's workspace. */
  | 'flow_not_found'
  /** Save or publish refused: the definition has problems (shown in the editor). */
  | 'invalid_flow'
  /** Save refused: someone else saved the draft meanwhile; the editor asks the person whose draft stays. */
  | 'draft_conflict'
  /** Any other failed call. */
  | 'request_failed'

const MAX_OTT_LENGTH = 512

/** The host's message if it is a well-formed `auth`, else undefined. */
export function parseParentMessage(data: unknown): AuthMessage | undefined {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined
  const { type, ott } = data as Record<string, unknown>
  if (type !== 'auth' || typeof ott !== 'string') return undefined
  if (ott.length === 0 || ott.length > MAX_OTT_LENGTH) return undefined
  return { type, ott }
}

/**
 * Talks to the parent window. `ready` goes to any origin (the host's is not known yet, and it says
 * nothing); everything after goes only to the origin that sent `auth`.
 */
export class ParentChannel {
  private hostOrigin: string | undefined

  constructor(private readonly self: Window) {}

  get embedded(): boolean {
    return this.self.parent !== this.self
  }

  post(message: EditorMessage): void {
    if (!this.embedded) return
    const target = message.type === 'ready' ? '*' : this.hostOrigin
    if (target === undefined) return
    this.self.parent.postMessage(message, target)
  }

  /** Calls `onAuth` for each valid `auth` from the parent; returns the unsubscribe function. */
  listen(onAuth: (message: AuthMessage) => void): () => void {
    const handler = (event: MessageEvent) => {
      if (event.source !== this.self.parent || event.source === this.self) return
      const message = parseParentMessage(event.data)
      if (!message) return
      // An opaque origin ("null", a sandboxed host) can only be answered with "*".
      this.hostOrigin = event.origin === 'null' ? '*' : event.origin
      onAuth(message)
    }
    this.self.addEventListener('message', handler)
    return () => this.self.removeEventListener('message', handler)
  }
}
