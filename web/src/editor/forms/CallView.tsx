import type { ReactNode } from 'react'
import type { HttpCallAnswer, HttpCallRequest } from '../../../../src/domain/outside-call.js'
import { useT } from '../i18n'
import { JsonBody } from './JsonBody'

/** A call outside and what came back: an HTTP request's "Try it", or a call of a preview session. */
export interface ShownCall {
  request: HttpCallRequest
  answer: HttpCallAnswer
  durationMs: number
}

const succeeded = (answer: HttpCallAnswer) => !('error' in answer) && answer.status >= 200 && answer.status <= 299

/**
 * The request line, the status (or why there is none) and the duration, then what was sent and
 * what came back, each behind a disclosure. `onPick` makes the body's values pick their path;
 * `bodyOpen` shows the body at once. `outcome` ends the status line (the node's exit the call led
 * to, an AI call's tokens); `children`, what the call meant (an AI step's prompt and answer), come
 * before the raw request and answer.
 */
export function CallView({
  call,
  onPick,
  bodyOpen = false,
  outcome,
  testId,
  children,
}: {
  call: ShownCall
  onPick?(path: string): void
  bodyOpen?: boolean
  outcome?: ReactNode
  testId?: string
  children?: ReactNode
}) {
  const t = useT()
  const { request, answer, durationMs } = call
  return (
    <div className="call-view" data-testid={testId}>
      <p className="call-line">
        <code>
          <strong>{request.method}</strong> {request.url}
        </code>
      </p>
      <p className="call-outcome">
        {'error' in answer ? (
          <span className="badge call-bad" data-testid="call-outcome">
            {t(`call.error.${answer.error}`)}
          </span>
        ) : (
          <span className={`badge ${succeeded(answer) ? 'call-ok' : 'call-bad'}`} data-testid="call-outcome">
            {t('call.status', { status: answer.status })}
          </span>
        )}
        <span className="muted"> · {t('call.duration', { ms: durationMs })}</span>
        {outcome}
      </p>
      {'error' in answer && <p className="call-message">{answer.message}</p>}
      {children}
      <details>
        <summary>{t('call.sent')}</summary>
        <table className="call-headers">
          <tbody>
            {request.headers.map((header, i) => (
              <tr key={i}>
                <th scope="row">{header.name}</th>
                <td>
                  <code>{header.value}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {request.body !== null && <JsonBody body={request.body} />}
      </details>
      {!('error' in answer) && (
        <>
          <details>
            <summary>{t('call.headers', { count: Object.keys(answer.headers).length })}</summary>
            <table className="call-headers">
              <tbody>
                {Object.entries(answer.headers).map(([name, value]) => (
                  <tr key={name}>
                    <th scope="row">{name}</th>
                    <td>
                      <code>{value}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </details>
          <details open={bodyOpen} data-testid="call-body">
            <summary>{t('call.body')}</summary>
            {answer.body === '' ? <p className="muted">{t('call.emptyBody')}</p> : <JsonBody body={answer.body} onPick={onPick} testId="call-body-json" />}
          </details>
        </>
      )}
    </div>
  )
}
