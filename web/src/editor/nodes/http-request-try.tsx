import { useId, useState } from 'react'
import { interpolator } from '../../../../src/domain/interpolate.js'
import type { Data } from '../../../../src/domain/nodes/http-request.js'
import { errorText } from '../../shared/api-problems'
import type { TriedCall, VariableType, VariableValue } from '../api'
import { CallView } from '../forms/CallView'
import { Field } from '../forms/fields'
import { parseDefault, showDefault } from '../forms/variable-text'
import { useWorkspace } from '../workspace'
import { httpRequestStrings as strings } from './http-request-strings'

/** The variables the request's templates read, by name (`{{customer.id}}` reads customer); secrets are no variables. */
function variablesRead(data: Data): string[] {
  const reader = interpolator({ system: {}, variables: {} }, { secret: () => '' })
  const read = (value: unknown): void => {
    if (typeof value === 'string') reader.text(value)
    else if (Array.isArray(value)) value.forEach(read)
    else if (typeof value === 'object' && value !== null) Object.values(value).forEach(read)
  }
  read(data.url)
  data.headers?.forEach((header) => read(header.value))
  read(data.body)
  return [...new Set([...reader.unknown].map((path) => path.split('.')[0]!))]
}

/**
 * "Try it": sends the node's request once through the service, with sample values of the
 * variables it reads, and shows the answer; a click on a value of its body picks that value's path.
 */
export function HttpTry({ data, onPick, picked }: { data: Data; onPick(path: string): void; picked: string | undefined }) {
  const t = strings.useT()
  const { variables, tryHttpRequest } = useWorkspace()
  const heading = useId()
  const [texts, setTexts] = useState<Record<string, string>>({})
  const [busy, setBusy] = useState(false)
  const [tried, setTried] = useState<TriedCall>()
  const [failure, setFailure] = useState<string>()

  const samples = variablesRead(data).map((name) => {
    const variable = variables.find((v) => v.name === name)
    const type: VariableType = variable?.type ?? 'string'
    const text = texts[name] ?? showDefault(variable?.defaultValue ?? null)
    return { name, type, text, parsed: parseDefault(type, text) }
  })
  const ready = samples.every((sample) => sample.parsed.ok)

  const send = async () => {
    const values: Record<string, VariableValue> = {}
    for (const { name, parsed } of samples) if (parsed.ok && parsed.value !== null) values[name] = parsed.value
    setBusy(true)
    setFailure(undefined)
    try {
      setTried(await tryHttpRequest({ request: data, variables: values }))
    } catch (error) {
      setTried(undefined)
      setFailure(t('try.failed', { message: errorText(error, t) }))
    } finally {
      setBusy(false)
    }
  }

  return (
    <section className="http-try group" aria-labelledby={heading} data-testid="http-try">
      <h3 id={heading}>{t('try.title')}</h3>
      <p className="hint">{t('try.hint')}</p>
      {samples.length > 0 && (
        <div className="http-try-samples" role="group" aria-label={t('try.samples')}>
          {samples.map(({ name, type, text, parsed }) => {
            const set = (value: string) => setTexts({ ...texts, [name]: value })
            return (
              <Field key={name} label={t('try.sample', { name: `${name} · ${t(`vtype.${type}`)}` })} error={parsed.ok ? undefined : t('try.badSample', { type: t(`vtype.${type}`) })}>
                {type === 'boolean' ? (
                  <select value={text} onChange={(e) => set(e.target.value)}>
                    <option value="">{t('test.unset')}</option>
                    <option value="true">{t('test.yes')}</option>
                    <option value="false">{t('test.no')}</option>
                  </select>
                ) : type === 'object' ? (
                  <textarea rows={3} className="code" spellCheck={false} value={text} onChange={(e) => set(e.target.value)} />
                ) : (
                  <input type={type === 'number' ? 'number' : 'text'} value={text} onChange={(e) => set(e.target.value)} />
                )}
              </Field>
            )
          })}
        </div>
      )}
      <button type="button" className="primary" disabled={busy || !ready || !data.url} onClick={() => void send()} data-testid="http-try-send">
        {busy ? t('try.sending') : t('try.send')}
      </button>
      <div className="http-try-result" aria-live="polite" data-testid="http-try-result">
        {failure && <p className="field-error">{failure}</p>}
        {tried && (
          <>
            {!('error' in tried.answer) && tried.answer.body !== '' && <p className="hint">{t('try.pickHint')}</p>}
            <CallView call={tried} onPick={onPick} bodyOpen />
          </>
        )}
        {picked && tried && <p className="hint" role="status">{picked}</p>}
      </div>
    </section>
  )
}
