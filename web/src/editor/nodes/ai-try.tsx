import { useId, useState } from 'react'
import type { Data } from '../../../../src/domain/nodes/ai.js'
import { errorText } from '../../shared/api-problems'
import { ChatTranscript, type ChatEntry } from '../../shared/chat-transcript'
import type { TriedAiStep } from '../api'
import { CallView } from '../forms/CallView'
import { Field } from '../forms/fields'
import { SampleValues, useSamples, variablesRead } from '../forms/SampleValues'
import { useLang } from '../i18n'
import { useWorkspace } from '../workspace'
import { PromptView } from './ai-exchange'
import { aiExitWord, aiStrings as strings } from './ai-strings'

const shown = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value))

/**
 * "Try it": runs the step once through the service on a sample message of the contact (and sample
 * values of the variables its texts read), and shows the exit it took, what it sent or filled,
 * its warnings, the tokens spent, the prompt by role and the call with its raw answer.
 */
export function AiTry({ data }: { data: Data }) {
  const t = strings.useT()
  const lang = useLang()
  const { tryAiStep } = useWorkspace()
  const heading = useId()
  const samples = useSamples(variablesRead(data.instructions, data.knowledge))
  const [message, setMessage] = useState('')
  const [busy, setBusy] = useState(false)
  const [tried, setTried] = useState<{ message: string; answer: TriedAiStep }>()
  const [failure, setFailure] = useState<string>()

  const send = async () => {
    setBusy(true)
    setFailure(undefined)
    // The answer shown is always of the step as it is now: the one before goes while the model is asked.
    setTried(undefined)
    try {
      setTried({ message, answer: await tryAiStep({ step: data, message, variables: samples.values() }) })
    } catch (error) {
      setFailure(t('try.failed', { message: errorText(error, t) }))
    } finally {
      setBusy(false)
    }
  }

  return (
    <section className="http-try group" aria-labelledby={heading} data-testid="ai-try">
      <h3 id={heading}>{t('try.title')}</h3>
      <p className="hint">{t('try.hint')}</p>
      <Field label={t('try.message')}>
        <textarea rows={2} value={message} onChange={(e) => setMessage(e.target.value)} />
      </Field>
      <SampleValues samples={samples} />
      {!data.connectionId && <p className="hint">{t('try.needsConnection')}</p>}
      <button type="button" className="primary" disabled={busy || !samples.ready || !data.connectionId || !message.trim()} onClick={() => void send()} data-testid="ai-try-send">
        {busy ? t('try.sending') : t('try.send')}
      </button>
      <div className="http-try-result" aria-live="polite" data-testid="ai-try-result">
        {failure && <p className="field-error">{failure}</p>}
        {tried && <TriedView sample={tried.message} tried={tried.answer} exitWord={(exit) => aiExitWord(exit, lang) ?? exit} />}
      </div>
    </section>
  )
}

function TriedView({ sample, tried, exitWord }: { sample: string; tried: TriedAiStep; exitWord(exit: string): string }) {
  const t = strings.useT()
  const filled = Object.entries(tried.variables)
  const entries: ChatEntry[] = [
    { kind: 'contact', key: 'sample', message: { type: 'text', text: { body: sample } } },
    ...tried.messages.map((body, i): ChatEntry => ({ kind: 'bot', key: `sent-${i}`, message: { type: 'text', text: { body } } })),
  ]
  return (
    <>
      <p className="call-outcome">
        <span className={`badge ${tried.exit === 'error' ? 'call-bad' : 'call-ok'}`} data-testid="ai-try-exit">
          {t('try.exit', { exit: exitWord(tried.exit) })}
        </span>
        <span className="muted" data-testid="ai-try-tokens">
          {' '}
          · {t('ai.tokens', { prompt: tried.usage.promptTokens, completion: tried.usage.completionTokens })} · {t('call.duration', { ms: tried.durationMs })}
        </span>
      </p>
      {tried.warnings.length > 0 && (
        <div className="problems-box" data-testid="ai-try-warnings">
          <strong>{t('try.warnings')}</strong>
          <ul>
            {tried.warnings.map((warning, i) => (
              <li key={i}>{warning}</li>
            ))}
          </ul>
        </div>
      )}
      <ChatTranscript entries={entries} t={t} aria-label={t('try.conversation')} data-testid="ai-try-chat" />
      {filled.length > 0 ? (
        <table className="call-headers" data-testid="ai-try-variables">
          <caption className="muted">{t('try.filled')}</caption>
          <tbody>
            {filled.map(([name, value]) => (
              <tr key={name}>
                <th scope="row">{name}</th>
                <td>
                  <code>{shown(value)}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        tried.messages.length === 0 && <p className="muted">{t('try.noneFilled')}</p>
      )}
      <PromptView body={tried.request?.body} testId="ai-try-prompt" />
      {tried.request && tried.answer && (
        <details className="call-view" data-testid="ai-try-call">
          <summary>{t('try.call')}</summary>
          <CallView call={{ request: tried.request, answer: tried.answer, durationMs: tried.durationMs }} />
        </details>
      )}
    </>
  )
}
