import { useRef, useState } from 'react'
import { api, unwrap } from '../../api'
import { ErrorNotice } from '../../components/ui'
import { useT, type Translate } from '../../i18n'
import type { AiConnection, ConnectionCheck } from './api-types'
import { sayCheckProblem } from './check-problem'

/** The models a working connection's endpoint lists, shown: the first ten, then how many more. */
const SHOWN_MODELS = 10

type CheckState =
  | { name: 'idle' }
  | { name: 'running'; connection: AiConnection }
  | { name: 'done'; connection: AiConnection; check: ConnectionCheck }
  | { name: 'failed'; connection: AiConnection; error: unknown }

/** The last connection test of the screen: one at a time, a later one replacing what an earlier one found. */
export function useConnectionCheck() {
  const [state, setState] = useState<CheckState>({ name: 'idle' })
  const latest = useRef(0)
  const run = async (connection: AiConnection) => {
    const mine = ++latest.current
    setState({ name: 'running', connection })
    try {
      const check = await unwrap(api.POST('/v1/ai-connections/{id}/check', { params: { path: { id: connection.id } } }))
      if (mine === latest.current) setState({ name: 'done', connection, check })
    } catch (error) {
      if (mine === latest.current) setState({ name: 'failed', connection, error })
    }
  }
  const clear = () => {
    latest.current++
    setState({ name: 'idle' })
  }
  return { state, run, clear }
}

const modelList = (models: string[], t: Translate) =>
  models.length > SHOWN_MODELS ? t('aiConnections.check.moreModels', { models: models.slice(0, SHOWN_MODELS).join(', '), count: models.length - SHOWN_MODELS }) : models.join(', ')

/** What the last test found, said in a live region: it works (with the models listed), or why it does not. */
export function CheckResult({ state }: { state: CheckState }) {
  const t = useT()
  return (
    <div role="status" className="aic-check" data-testid="connection-check">
      {state.name === 'running' && <p className="notice">{t('aiConnections.check.running', { name: state.connection.name })}</p>}
      {state.name === 'failed' && <ErrorNotice error={state.error} />}
      {state.name === 'done' && <Outcome connection={state.connection} check={state.check} />}
    </div>
  )
}

function Outcome({ connection, check }: { connection: AiConnection; check: ConnectionCheck }) {
  const t = useT()
  const ms = new Intl.NumberFormat(t('api.numberLocale')).format(check.durationMs)
  if (!check.ok) {
    return (
      <p className="notice error">
        <span>
          <strong>{t('aiConnections.check.fails', { name: connection.name, ms })}</strong> {sayCheckProblem(check.problem ?? '', t)}
        </span>
      </p>
    )
  }
  return (
    <p className="notice ok">
      <span>
        <strong>{t('aiConnections.check.works', { name: connection.name, ms })}</strong>{' '}
        {check.models.length > 0 ? t('aiConnections.check.models', { models: modelList(check.models, t) }) : t('aiConnections.check.answered', { model: connection.model })}
      </span>
    </p>
  )
}
