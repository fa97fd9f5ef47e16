import { useEffect, useId, useRef, useState, type ReactNode } from 'react'
import { Link } from 'wouter'
import { api, createdId, unwrap } from '../../api'
import { NodeName, type ShownNode } from '../../components/NodeName'
import { errorAt, ErrorNotice, Field, FormError, Loading, SelectField, useFieldErrors } from '../../components/ui'
import { useT, type Translate } from '../../i18n'
import type { Expectation, ExpectedMessage, TestBody, TestStep } from '../flows/api-types'
import { checksOf, expectationAt, fieldsOf, matchKindOf, matchTextOf, MATCH_KINDS, messagePath, textMatch, variableOf, withCheck, withMessageMatch, withSentText, type MatchKind } from '../flows/test-draft'
import { stepWords, turnName } from '../flows/test-words'
import { sessionStateKey } from './session-state'
import '../flows/flow-tests.css'

type State =
  | { name: 'closed' }
  | { name: 'loading' }
  | { name: 'failed'; error: unknown }
  | { name: 'editing'; flowId: string; original: TestBody; test: TestBody }
  | { name: 'saved'; flowId: string; testId: string; testName: string }

/**
 * "Turn into a test": the session's conversation as a test of its flow (GET
 * /v1/sessions/{id}/test), shown to edit (its name, what the contact sent, how each message's words
 * are checked, which checks to keep), then saved with the flow (POST /v1/flows/{flowId}/tests).
 */
export function TurnIntoTest({ sessionId, nodeName }: { sessionId: string; nodeName(id: string): ShownNode }) {
  const t = useT()
  const [state, setState] = useState<State>({ name: 'closed' })
  // Back from the form, the keyboard's place is where the form was: the saved notice's link, else the button that opened it.
  const wasEditing = useRef(false)
  const seeTests = useRef<HTMLAnchorElement>(null)
  const again = useRef<HTMLButtonElement>(null)
  useEffect(() => {
    if (wasEditing.current && state.name !== 'editing') (seeTests.current ?? again.current)?.focus()
    wasEditing.current = state.name === 'editing'
  }, [state.name])

  async function open() {
    setState({ name: 'loading' })
    try {
      const { flowId, test } = await unwrap(api.GET('/v1/sessions/{sessionId}/test', { params: { path: { sessionId } } }))
      setState({ name: 'editing', flowId, original: test, test })
    } catch (error) {
      setState({ name: 'failed', error })
    }
  }

  switch (state.name) {
    case 'editing':
      return (
        <TestForm
          state={state}
          nodeName={nodeName}
          onChange={(test) => setState({ ...state, test })}
          onSaved={(testId) => setState({ name: 'saved', flowId: state.flowId, testId, testName: state.test.name.trim() })}
          onCancel={() => setState({ name: 'closed' })}
        />
      )
    case 'loading':
      return <Loading />
    case 'closed':
    case 'failed':
    case 'saved':
      return (
        <div className="turn-into-test">
          {state.name === 'saved' && (
            <div className="notice ok" role="status">
              <span>{t('flowTests.form.saved', { name: state.testName })}</span>
              <Link ref={seeTests} href={`~/dashboard/flows/${state.flowId}?test=${state.testId}`}>
                {t('flowTests.form.seeTests')}
              </Link>
            </div>
          )}
          {state.name === 'failed' && <ErrorNotice error={state.error} onRetry={() => void open()} />}
          <div className="turn-into-test-action">
            <button ref={again} type="button" className="secondary" onClick={() => void open()}>
              {state.name === 'saved' ? t('flowTests.turnIntoAgain') : t('flowTests.turnInto')}
            </button>
            <p className="hint">{t('flowTests.turnIntoHint')}</p>
          </div>
        </div>
      )
    default: {
      const exhaustive: never = state
      return exhaustive
    }
  }
}

function TestForm({
  state,
  nodeName,
  onChange,
  onSaved,
  onCancel,
}: {
  state: Extract<State, { name: 'editing' }>
  nodeName(id: string): ShownNode
  onChange(test: TestBody): void
  onSaved(testId: string): void
  onCancel(): void
}) {
  const t = useT()
  const { flowId, original, test } = state
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)
  const fields = useFieldErrors(error)
  const shownOnFields = fieldsOf(test).flatMap((field) => [field, `${field}.*`])
  const turns = [0, ...test.steps.map((_step, index) => index + 1)]

  async function save() {
    setBusy(true)
    setError(undefined)
    try {
      onSaved(await createdId(api.POST('/v1/flows/{id}/tests', { params: { path: { id: flowId } }, body: test })))
    } catch (failure) {
      setError(failure)
      setBusy(false)
    }
  }

  return (
    <form
      className="card test-form"
      aria-labelledby="test-form-title"
      noValidate
      onSubmit={(event) => {
        event.preventDefault()
        void save()
      }}
    >
      <h2 id="test-form-title">{t('flowTests.form.title')}</h2>
      <p className="hint">{t('flowTests.form.intro')}</p>
      <Field label={t('flowTests.form.name')} hint={t('flowTests.form.nameHint')} error={fields.name}>
        {(props) => <input {...props} autoFocus maxLength={200} value={test.name} onChange={(event) => onChange({ ...test, name: event.target.value })} />}
      </Field>
      {test.steps.length === 0 && <p className="notice">{t('flowTests.form.noSteps')}</p>}
      <ol className="test-turns">
        {turns.map((turn) => (
          <li key={turn}>
            <fieldset className="test-turn">
              <legend>{turnName(turn, t)}</legend>
              {turn > 0 && <Sent step={test.steps[turn - 1]!} error={errorAt(fields, `steps.${turn - 1}.send`)} onText={(body) => onChange(withSentText(test, turn, body))} />}
              <Checks
                turn={turn}
                expect={expectationAt(test, turn)}
                original={expectationAt(original, turn)}
                fields={fields}
                nodeName={nodeName}
                onKeep={(check, kept) => onChange(withCheck(test, original, turn, check, kept))}
                onMatch={(index, kind, text) => onChange(withMessageMatch(test, turn, index, textMatch(kind, text)))}
              />
            </fieldset>
          </li>
        ))}
      </ol>
      <FormError error={error} shownOnFields={shownOnFields} />
      <div className="test-form-actions">
        <button type="submit" disabled={busy}>
          {busy ? t('common.saving') : t('flowTests.form.submit')}
        </button>
        <button type="button" className="secondary" onClick={onCancel}>
          {t('common.cancel')}
        </button>
      </div>
    </form>
  )
}

/** What the contact sent on a step: a text to edit; anything else as it was. */
function Sent({ step, error, onText }: { step: TestStep; error: string | undefined; onText(body: string): void }) {
  const t = useT()
  if ('send' in step && step.send.type === 'text') {
    return (
      <Field label={t('flowTests.send.text')} error={error}>
        {(props) => <textarea {...props} rows={1} value={step.send.type === 'text' ? step.send.text.body : ''} onChange={(event) => onText(event.target.value)} />}
      </Field>
    )
  }
  return (
    <p className="test-sent">
      {stepWords(step, t)} <span className="hint">{t('flowTests.send.kept')}</span>
    </p>
  )
}

/** Each check of the turn's expectation with a box to keep it; the messages' words each with how they are checked. */
function Checks({
  turn,
  expect,
  original,
  fields,
  nodeName,
  onKeep,
  onMatch,
}: {
  turn: number
  expect: Expectation | undefined
  original: Expectation | undefined
  fields: Record<string, string>
  nodeName(id: string): ShownNode
  onKeep(check: string, kept: boolean): void
  onMatch(index: number, kind: MatchKind, text: string): void
}) {
  const t = useT()
  const kept = new Set(checksOf(expect))
  const checks = checksOf(original)
  if (!original || checks.length === 0) return <p className="hint">{t('flowTests.expectsNothing')}</p>
  return (
    <>
      <p className="test-subtitle">{t('flowTests.expects')}</p>
      <ul className="test-checks">
        {checks.map((check) => (
          <li key={check}>
            <CheckBox checked={kept.has(check)} onChange={(checked) => onKeep(check, checked)}>
              {checkWords(check, original, nodeName, t)}
            </CheckBox>
            {check === 'messages' && kept.has(check) && (
              <ol className="test-messages">
                {(expect?.messages ?? []).map((message, index) => (
                  <li key={index}>
                    <MessageMatch
                      n={index + 1}
                      type={message.type}
                      kind={matchKindOf(message.text)}
                      text={matchTextOf(message.text ?? original.messages?.[index]?.text)}
                      error={errorAt(fields, messagePath(turn, index))}
                      onChange={(kind, text) => onMatch(index, kind, text)}
                    />
                  </li>
                ))}
              </ol>
            )}
          </li>
        ))}
      </ul>
    </>
  )
}

function CheckBox({ checked, onChange, children }: { checked: boolean; onChange(checked: boolean): void; children: ReactNode }) {
  const id = useId()
  return (
    <div className="test-check">
      <input id={id} type="checkbox" checked={checked} onChange={(event) => onChange(event.target.checked)} />
      <label htmlFor={id}>{children}</label>
    </div>
  )
}

/** A check in words: "Send these 2 messages, in order", "Wait at node Question". */
function checkWords(check: string, expect: Expectation, nodeName: (id: string) => ShownNode, t: Translate): ReactNode {
  const variable = variableOf(check)
  if (variable !== undefined) {
    const value = Object.entries(expect.variables ?? {}).find(([name]) => name === variable)?.[1]
    return t('flowTests.check.variable', { name: variable, value: JSON.stringify(value) })
  }
  const node = (words: string, id: string) => (
    <>
      {words} <NodeName node={nodeName(id)} />
    </>
  )
  switch (check) {
    case 'messages':
      return t('flowTests.check.messages', { count: expect.messages?.length ?? 0 })
    case 'transfer':
      return expect.transfer?.targetType && expect.transfer.targetId
        ? t('flowTests.check.transfer', { target: t(`sessions.chat.target.${expect.transfer.targetType}`), id: expect.transfer.targetId })
        : t('flowTests.check.transferAny')
    case 'finish':
      return t('flowTests.check.finish')
    case 'visits':
      return expect.visits === undefined ? check : node(t('flowTests.check.visits'), expect.visits)
    case 'waitsAt':
      return expect.waitsAt ? node(t('flowTests.check.waitsAt'), expect.waitsAt) : t('flowTests.check.waitsNowhere')
    case 'status':
      return expect.status === undefined ? check : t('flowTests.check.status', { state: t(sessionStateKey(expect.status)) })
    case 'kanban':
      return t('flowTests.check.kanban', { count: expect.kanban?.length ?? 0 })
    default:
      return check
  }
}

/** How one expected message's words are checked: exactly, contained, by a pattern, or not at all. */
function MessageMatch({
  n,
  type,
  kind,
  text,
  error,
  onChange,
}: {
  n: number
  type: ExpectedMessage['type']
  kind: MatchKind
  text: string
  error: string | undefined
  onChange(kind: MatchKind, text: string): void
}) {
  const t = useT()
  return (
    <div className="form-row test-message">
      <SelectField
        label={t('flowTests.message.match', { n })}
        hint={type && type !== 'text' ? t('flowTests.message.typeHint', { type: t(`flowTests.message.type.${type}`) }) : undefined}
        value={kind}
        onChange={(value) => onChange(MATCH_KINDS.find((known) => known === value) ?? 'equals', text)}
        options={MATCH_KINDS.map((option) => ({ value: option, label: t(`flowTests.match.${option}`) }))}
      />
      {kind !== 'any' && (
        <Field label={t('flowTests.message.text', { n })} hint={kind === 'pattern' ? t('flowTests.match.patternHint') : undefined} error={error}>
          {(props) => <textarea {...props} rows={1} value={text} onChange={(event) => onChange(kind, event.target.value)} />}
        </Field>
      )}
    </div>
  )
}
