import type { MessageKey, Translate } from '../../i18n'

// A connection test that fails answers `problem` in the service's words (callProblem and
// connectionCheck of src/domain/chat-completions.ts). Here each known sentence becomes the
// person's; one no rule knows is shown as the service wrote it.

interface Rule {
  pattern: RegExp
  say: MessageKey
  params?: (match: RegExpExecArray) => Record<string, string>
}

const RULES: Rule[] = [
  { pattern: /^the endpoint refused the key \((\d+)(?:: (.*))?\); check the secret (\S+)$/s, say: 'aiConnections.problem.keyRefused', params: (m) => ({ said: m[2] ?? `HTTP ${m[1]}`, secret: m[3]! }) },
  { pattern: /^the endpoint does not list the model (.+?); it lists (.+)$/s, say: 'aiConnections.problem.noModel', params: (m) => ({ model: m[1]!, models: m[2]! }) },
  { pattern: /^the endpoint does not list the model (.+)$/s, say: 'aiConnections.problem.noModelListed', params: (m) => ({ model: m[1]! }) },
  { pattern: /^the endpoint has no (\S+) \(404\)/, say: 'aiConnections.problem.noPath', params: (m) => ({ url: m[1]! }) },
  { pattern: /^the key could not be read: no secret (\S+) in this workspace$/, say: 'aiConnections.problem.noSecret', params: (m) => ({ name: m[1]! }) },
  { pattern: /^the key could not be read: (.*)$/s, say: 'aiConnections.problem.secret', params: (m) => ({ detail: m[1]! }) },
  { pattern: /: an endpoint on a private network needs its range allowed by the operator/, say: 'aiConnections.problem.private' },
  { pattern: /^(\S+) gave no answer in time/, say: 'aiConnections.problem.timeout', params: (m) => ({ url: m[1]! }) },
  { pattern: /^(\S+) could not be reached: (.*)$/s, say: 'aiConnections.problem.unreachable', params: (m) => ({ url: m[1]!, detail: m[2]! }) },
  { pattern: /^(\S+) answered (\d+)(?:: (.*))?$/s, say: 'aiConnections.problem.status', params: (m) => ({ url: m[1]!, status: m[2]!, said: m[3] || '—' }) },
]

/** Why a connection does not work, in the person's words. */
export function sayCheckProblem(problem: string, t: Translate): string {
  for (const rule of RULES) {
    const match = rule.pattern.exec(problem)
    if (match) return t(rule.say, rule.params?.(match))
  }
  return t('aiConnections.problem.other', { problem })
}
