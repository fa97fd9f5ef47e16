import { NodeName, type ShownNode } from '../../components/NodeName'
import { useT } from '../../i18n'
import type { TranscriptEntry } from './api-types'

/** A call an httpRequest node made, as the session recorded it: the request as sent (secrets by name) and its answer or why there is none. */
export type RecordedCall = Pick<Extract<TranscriptEntry, { kind: 'call' }>, 'nodeId' | 'request' | 'answer' | 'durationMs'>

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/** The call an `OutsideCallAnswered` event's data holds; undefined for data of another shape. */
export function callOf(data: unknown): RecordedCall | undefined {
  if (!isRecord(data) || typeof data.nodeId !== 'string' || typeof data.durationMs !== 'number' || !isRecord(data.request) || !isRecord(data.answer)) return undefined
  return data as unknown as RecordedCall
}

const answered = (answer: RecordedCall['answer']): answer is Extract<RecordedCall['answer'], { status: number }> => !('error' in answer)
const succeeded = (answer: RecordedCall['answer']) => answered(answer) && answer.status >= 200 && answer.status <= 299

/** A secret is recorded as `{{secrets.NAME}}` in place of its value: shown as such, and marked. */
const SECRET_REFERENCE = /(\{\{secrets\.[A-Za-z0-9_]{1,64}\}\})/

function WithSecrets({ text }: { text: string }) {
  const t = useT()
  return (
    <>
      {text.split(SECRET_REFERENCE).map((part, i) =>
        i % 2 === 1 ? (
          <mark key={i} className="call-secret" title={t('sessions.call.secret')}>
            {part}
          </mark>
        ) : (
          part
        ),
      )}
    </>
  )
}

/** A body as people read it: JSON indented, anything else as it came. */
const readable = (body: string): string => {
  try {
    return JSON.stringify(JSON.parse(body), null, 2)
  } catch {
    return body
  }
}

/** A number of milliseconds as the person's language writes it. */
function useMs() {
  const t = useT()
  const format = new Intl.NumberFormat(t('api.numberLocale'))
  return (ms: number) => format.format(ms)
}

/** The call on one line: the node that made it, method and URL, the status or why there is none, how long it took. */
export function CallLine({ call, node }: { call: RecordedCall; node: ShownNode }) {
  const t = useT()
  const ms = useMs()
  const { request, answer } = call
  return (
    <span className="call-line">
      <span>
        {t('sessions.call.from')} <NodeName node={node} />
      </span>{' '}
      <code className="call-request">
        <strong>{request.method}</strong> <WithSecrets text={request.url} />
      </code>{' '}
      <span aria-hidden="true">→</span>{' '}
      <span className={`badge call-outcome ${succeeded(answer) ? 'ok' : 'error'}`} data-testid="call-outcome">
        {answered(answer) ? t('sessions.call.status', { status: answer.status }) : t(`call.error.${answer.error}`)}
      </span>{' '}
      <span className="call-duration">{t('sessions.call.duration', { ms: ms(call.durationMs) })}</span>
    </span>
  )
}

function Headers({ caption, headers }: { caption: string; headers: readonly (readonly [string, string])[] }) {
  const t = useT()
  if (headers.length === 0) {
    return (
      <p className="hint">
        {caption}: {t('sessions.call.noHeaders')}
      </p>
    )
  }
  return (
    <table className="call-headers">
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">{t('sessions.call.header')}</th>
          <th scope="col">{t('sessions.call.value')}</th>
        </tr>
      </thead>
      <tbody>
        {headers.map(([name, value], i) => (
          <tr key={i}>
            <th scope="row" className="mono">
              {name}
            </th>
            <td className="mono">
              <WithSecrets text={value} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

function Body({ body }: { body: string }) {
  const t = useT()
  return (
    <>
      <p className="call-subtitle">{t('sessions.call.body')}</p>
      {body === '' ? (
        <p className="hint">{t('sessions.call.noBody')}</p>
      ) : (
        // Focusable, so a long body can be scrolled with the keyboard.
        <pre className="snippet json-block call-body" tabIndex={0} data-testid="call-body">
          <WithSecrets text={readable(body)} />
        </pre>
      )}
    </>
  )
}

/** What the call sent (headers with secrets by name, body) and what came back (status, headers, body indented), or why nothing did. */
export function CallDetails({ call }: { call: RecordedCall }) {
  const t = useT()
  const ms = useMs()
  const { request, answer } = call
  return (
    <div className="call-details" data-testid="call-details">
      <section className="call-part">
        <p className="call-subtitle">{t('sessions.call.request')}</p>
        <p className="call-request-line">
          <code>
            <strong>{request.method}</strong> <WithSecrets text={request.url} />
          </code>
          <span className="hint">{t('sessions.call.timeout', { ms: ms(request.timeoutMs) })}</span>
        </p>
        <Headers caption={t('sessions.call.requestHeaders')} headers={request.headers.map((header) => [header.name, header.value] as const)} />
        {request.body !== null && <Body body={request.body} />}
      </section>
      <section className="call-part">
        <p className="call-subtitle">{t('sessions.call.answer')}</p>
        {answered(answer) ? (
          <>
            <p>
              <span className={`badge call-outcome ${succeeded(answer) ? 'ok' : 'error'}`}>{t('sessions.call.status', { status: answer.status })}</span>{' '}
              <span className="hint">{t('sessions.call.duration', { ms: ms(call.durationMs) })}</span>
            </p>
            <Headers caption={t('sessions.call.answerHeaders')} headers={Object.entries(answer.headers)} />
            <Body body={answer.body} />
          </>
        ) : (
          <p className="call-error">{t('sessions.call.noAnswer', { message: answer.message })}</p>
        )}
      </section>
    </div>
  )
}
