import { parseCompletion, type Completion } from '../../../../src/domain/chat-completions.js'
import type { HttpCallAnswer } from '../../../../src/domain/outside-call.js'
import { aiStrings as strings } from './ai-strings'

// What an AI step asked the model and what it answered, as "Try it" (./ai-try.tsx) and the test
// panel's debug view show it.

interface PromptMessage {
  role: string
  content: string
}

/** The messages of a chat completions request's body, read defensively: none when it holds none. */
function promptOf(body: string | null | undefined): PromptMessage[] {
  try {
    const messages: unknown = body ? (JSON.parse(body) as { messages?: unknown }).messages : undefined
    if (!Array.isArray(messages)) return []
    return messages.map((message: { role?: unknown; content?: unknown }) => ({ role: String(message?.role ?? ''), content: typeof message?.content === 'string' ? message.content : JSON.stringify(message?.content) }))
  } catch {
    return []
  }
}

const ROLES = ['system', 'user', 'assistant'] as const
const isRole = (role: string): role is (typeof ROLES)[number] => (ROLES as readonly string[]).includes(role)

/** The prompt of a chat completions request, message by message with its role, behind a disclosure; nothing when the body holds none. */
export function PromptView({ body, testId }: { body: string | null | undefined; testId?: string }) {
  const t = strings.useT()
  const prompt = promptOf(body)
  if (prompt.length === 0) return null
  return (
    <details className="call-view" data-testid={testId}>
      <summary>{t('try.prompt', { count: prompt.length })}</summary>
      {prompt.map((line, i) => (
        <div key={i}>
          <p className="muted">{isRole(line.role) ? t(`try.role.${line.role}`) : line.role}</p>
          <pre className="json-body">{line.content}</pre>
        </div>
      ))}
    </details>
  )
}

/**
 * The model's text and tokens in a recorded answer, whole or streamed as chunks, read by the rule the
 * engine reads it with. The connection only words why an answer has no text, which the turn's
 * warnings tell already.
 */
export const completionOf = (answer: HttpCallAnswer) => parseCompletion(answer, { baseUrl: '', apiKeySecret: '', model: '', headers: [] }, 0)

/** An AI step's call in a preview: its prompt by role and the model's answer as text ({@link completionOf} its answer). */
export function AiExchange({ requestBody, completion }: { requestBody: string | null; completion: Completion }) {
  const t = strings.useT()
  return (
    <div className="ai-exchange" data-testid="ai-exchange">
      <PromptView body={requestBody} testId="ai-prompt" />
      <p className="muted">{t('ai.answer')}</p>
      {completion.ok ? (
        <pre className="json-body" data-testid="ai-answer">
          {completion.text}
        </pre>
      ) : (
        <p className="call-message">{t('ai.noAnswerText')}</p>
      )}
    </div>
  )
}
