import { useId, useState } from 'react'
import type { Data } from '../../../../src/domain/nodes/http-request.js'
import { errorText } from '../../shared/api-problems'
import type { TriedCall } from '../api'
import { CallView } from '../forms/CallView'
import { SampleValues, useSamples, variablesRead } from '../forms/SampleValues'
import { useWorkspace } from '../workspace'
import { httpRequestStrings as strings } from './http-request-strings'

/**
 * "Try it": sends the node's request once through the service, with sample values of the
 * variables it reads, and shows the answer; a click on a value of its body picks that value's path.
 */
export function HttpTry({ data, onPick, picked }: { data: Data; onPick(path: string): void; picked: string | undefined }) {
  const t = strings.useT()
  const { tryHttpRequest } = useWorkspace()
  const heading = useId()
  const samples = useSamples(variablesRead(data.url, data.headers?.map((header) => header.value), data.body))
  const [busy, setBusy] = useState(false)
  const [tried, setTried] = useState<TriedCall>()
  const [failure, setFailure] = useState<string>()

  const send = async () => {
    setBusy(true)
    setFailure(undefined)
    try {
      setTried(await tryHttpRequest({ request: data, variables: samples.values() }))
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
      <SampleValues samples={samples} />
      <button type="button" className="primary" disabled={busy || !samples.ready || !data.url} onClick={() => void send()} data-testid="http-try-send">
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
