import { useState, type FormEvent } from 'react'
import { useLocation } from 'wouter'
import { flowProblemText, sayProblem, splitProblems, type FlowOutline } from '../../../shared/api-problems'
import { ApiError, api, unwrap } from '../../api'
import { Field, FormError, useFieldErrors } from '../../components/ui'
import { useT, type Translate } from '../../i18n'

/** The form's id, for a way to it from elsewhere on the screen (the empty list's "New flow"). */
export const CREATE_FLOW_FORM = 'new-flow'

/**
 * A new flow in the key's workspace: a name, and optionally a definition to start from (else the
 * service's Start → End). What the service refuses shows on its field, a definition's problems by
 * the node they are in; the new flow's page opens.
 */
export function CreateFlowForm() {
  const t = useT()
  const [, navigate] = useLocation()
  const [name, setName] = useState('')
  const [definition, setDefinition] = useState('')
  const [error, setError] = useState<unknown>()
  const [definitionError, setDefinitionError] = useState<string>()
  const [busy, setBusy] = useState(false)

  async function submit(event: FormEvent) {
    event.preventDefault()
    const parsed = parseDefinition(definition)
    setDefinitionError(parsed.error ? t('flows.create.definitionNotJson', { message: parsed.error }) : undefined)
    if (parsed.error) return
    setBusy(true)
    setError(undefined)
    try {
      const created = await unwrap(api.POST('/v1/flows', { body: { name, ...(parsed.value === undefined ? {} : { definition: parsed.value }) } }))
      navigate(`/${created.id}`)
    } catch (failure) {
      setError(failure)
      if (failure instanceof ApiError && failure.status === 400 && parsed.value !== undefined) setDefinitionError(definitionProblems(failure.message, parsed.value, t))
      setBusy(false)
    }
  }

  const fields = useFieldErrors(error)
  return (
    <form id={CREATE_FLOW_FORM} className="card flows-create" aria-labelledby="flows-create-title" onSubmit={(event) => void submit(event)} noValidate>
      <h2 id="flows-create-title">{t('flows.create.title')}</h2>
      <Field label={t('common.name')} hint={t('flows.create.nameHint')} error={fields.name}>
        {(props) => <input {...props} value={name} onChange={(event) => setName(event.target.value)} maxLength={200} />}
      </Field>
      <details className="flows-create-definition" open={definition !== '' || definitionError !== undefined}>
        <summary>{t('flows.create.definitionToggle')}</summary>
        <Field label={t('flows.create.definition')} hint={t('flows.create.definitionHint')} error={definitionError}>
          {(props) => <textarea {...props} className="mono" rows={8} value={definition} onChange={(event) => setDefinition(event.target.value)} spellCheck={false} />}
        </Field>
      </details>
      {!definitionError && <FormError error={error} shownOnFields={['name']} />}
      <button type="submit" disabled={busy}>
        {busy ? t('common.creating') : t('flows.create.submit')}
      </button>
    </form>
  )
}

function parseDefinition(text: string): { value?: unknown; error?: string } {
  if (text.trim() === '') return {}
  try {
    return { value: JSON.parse(text) as unknown }
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) }
  }
}

/** Enough of what was sent to name a problem's node (the service found the definition wrong, so it is read warily). */
function outlineOf(definition: unknown): FlowOutline {
  const list = (key: string): Record<string, unknown>[] => {
    const items = typeof definition === 'object' && definition !== null ? (definition as Record<string, unknown>)[key] : undefined
    return Array.isArray(items) ? items.map((item) => (typeof item === 'object' && item !== null ? (item as Record<string, unknown>) : {})) : []
  }
  const text = (value: unknown) => (typeof value === 'string' ? value : '?')
  return { nodes: list('nodes').map((node) => ({ id: text(node.id) })), edges: list('edges').map((edge) => ({ source: text(edge.source), target: text(edge.target) })) }
}

/**
 * A refused definition's problems in words, each named by the node it is in ("Node greet: text is
 * empty"); undefined when the refusal is about the name.
 */
function definitionProblems(message: string, definition: unknown, t: Translate): string | undefined {
  const problems = splitProblems(message)
  if (problems.some((problem) => problem.field === 'name')) return undefined
  const outline = outlineOf(definition)
  return problems
    .map((problem) => (problem.part ? sayProblem(problem, t).text : flowProblemText(outline, { path: problem.path ?? '', message: problem.words }, t)))
    .join(' · ')
}
