import { useId, useState, type FormEvent } from 'react'
import { sayError, type SaidProblem } from '../../shared/api-problems'
import type { ConversationTestBody } from '../api'
import { Field } from '../forms/fields'
import { useT } from '../i18n'
import {
  expectationOf,
  MATCH_KINDS,
  matchKind,
  matchText,
  stepTitle,
  textMatch,
  withExpectation,
  withMessageText,
  type ExpectedMessage,
  type MatchKind,
} from './expectations'
import './conversation-tests.css'

export interface SaveAsTestProps {
  /** The conversation as the service recorded it as a test. */
  recorded: ConversationTestBody
  /** Saves the test with the flow; throws the service's refusal. */
  onSave(test: ConversationTestBody): Promise<void>
  onSaved(name: string): void
  onCancel(): void
}

/** A text check that must hold words: `contains` and a pattern need some; `equals` may be of an empty text. */
const emptyCheck = (message: ExpectedMessage) => message.text !== undefined && matchKind(message.text) !== 'equals' && matchText(message.text) === ''

/**
 * The conversation just tried, as a test to keep: the person names it and, turn by turn, decides
 * how each message the bot sent is checked (the same words, words it holds, a pattern) or not at all.
 */
export function SaveAsTest({ recorded, onSave, onSaved, onCancel }: SaveAsTestProps) {
  const t = useT()
  const ids = useId()
  const [name, setName] = useState('')
  const [test, setTest] = useState(recorded)
  const [saving, setSaving] = useState(false)
  const [refused, setRefused] = useState<SaidProblem[]>([])
  const turns = [0, ...test.steps.map((_, i) => i + 1)]
  const valid = name.trim() !== '' && turns.every((step) => !(expectationOf(test, step)?.messages ?? []).some(emptyCheck))

  const setText = (step: number, index: number, text: ExpectedMessage['text']) => setTest((current) => withExpectation(current, step, (expect) => withMessageText(expect, index, text)))

  const submit = async (event: FormEvent) => {
    event.preventDefault()
    if (!valid) return
    setSaving(true)
    setRefused([])
    try {
      await onSave({ ...test, name: name.trim() })
      onSaved(name.trim())
    } catch (error) {
      setRefused(sayError(error, t))
      setSaving(false)
    }
  }

  const nameProblem = refused.find((problem) => problem.field === 'name')
  const otherProblems = refused.filter((problem) => problem !== nameProblem)
  return (
    <form className="save-test" aria-labelledby={`${ids}-title`} onSubmit={(event) => void submit(event)} data-testid="save-test">
      <h3 id={`${ids}-title`}>{t('tests.save.title')}</h3>
      <p className="hint">{t('tests.save.hint')}</p>
      <Field label={t('tests.save.name')} error={nameProblem?.text}>
        {/* The form opens on a click of "Save as test": the name is what to fill first. */}
        <input type="text" value={name} autoFocus aria-invalid={nameProblem ? true : undefined} onChange={(e) => setName(e.target.value)} data-testid="save-test-name" />
      </Field>
      {turns.map((step) => {
        const messages = expectationOf(test, step)?.messages ?? []
        const original = expectationOf(recorded, step)?.messages ?? []
        return (
          <fieldset key={step} className="group save-test-step" data-testid="save-test-step">
            <legend>{stepTitle(test, step, t)}</legend>
            {messages.length === 0 && <p className="muted">{t('tests.save.silent')}</p>}
            {messages.map((message, index) => (
              <ExpectedText
                key={index}
                id={`${ids}-${step}-${index}`}
                n={index + 1}
                message={message}
                recorded={original[index]}
                onChange={(text) => setText(step, index, text)}
              />
            ))}
          </fieldset>
        )
      })}
      {otherProblems.map((problem, i) => (
        <p key={i} className="field-error" role="alert">
          {problem.text}
        </p>
      ))}
      <div className="save-test-actions">
        <button type="submit" className="primary" disabled={!valid || saving} data-testid="save-test-submit">
          {saving ? t('tests.save.saving') : t('tests.save.submit')}
        </button>
        <button type="button" className="secondary" onClick={onCancel} disabled={saving}>
          {t('tests.save.cancel')}
        </button>
      </div>
    </form>
  )
}

/** How one message's words are checked: its kind and words, or not checked (and back to the words recorded). */
function ExpectedText({ id, n, message, recorded, onChange }: { id: string; n: number; message: ExpectedMessage; recorded: ExpectedMessage | undefined; onChange(text: ExpectedMessage['text']): void }) {
  const t = useT()
  if (!recorded?.text) return <p className="muted expected-text">{t('tests.save.noWords', { n })}</p>
  const restore = recorded.text
  if (!message.text) {
    return (
      <p className="expected-text unchecked" data-testid="expected-text">
        {t('tests.save.unchecked', { n })}{' '}
        <button type="button" className="link" aria-label={t('tests.save.recheckNamed', { n })} onClick={() => onChange(restore)}>
          {t('tests.save.recheck')}
        </button>
      </p>
    )
  }
  const kind = matchKind(message.text)
  const text = matchText(message.text)
  const empty = emptyCheck(message)
  return (
    <div className="expected-text" data-testid="expected-text">
      <div className="expected-text-head">
        <label className="field-label" htmlFor={`${id}-words`}>
          {t('tests.at.messageText', { n })}
        </label>
        <select aria-label={t('tests.save.how', { n })} value={kind} onChange={(e) => onChange(textMatch(e.target.value as MatchKind, text))} data-testid="expected-kind">
          {MATCH_KINDS.map((option) => (
            <option key={option} value={option}>
              {t(`tests.match.${option}`)}
            </option>
          ))}
        </select>
        <button type="button" className="secondary" aria-label={t('tests.save.uncheckNamed', { n })} onClick={() => onChange(undefined)}>
          {t('tests.save.uncheck')}
        </button>
      </div>
      <textarea
        id={`${id}-words`}
        rows={Math.min(6, text.split('\n').length)}
        value={text}
        aria-invalid={empty ? true : undefined}
        aria-describedby={kind === 'pattern' || empty ? `${id}-about` : undefined}
        onChange={(e) => onChange(textMatch(kind, e.target.value))}
        data-testid="expected-words"
      />
      {(kind === 'pattern' || empty) && (
        <span id={`${id}-about`} className={empty ? 'field-error' : 'field-hint'}>
          {empty ? t('api.required') : t('tests.save.patternHint')}
        </span>
      )}
    </div>
  )
}
