import { useState, type FormEvent } from 'react'
import { useLocation } from 'wouter'
import { ApiError, api, unwrap } from '../../api'
import { Field, FormError } from '../../components/ui'
import { useT } from '../../i18n'

/**
 * A new flow in the key's workspace: a name, and optionally a definition to start from (else the
 * service's Start → End). The API's messages show on their field; the new flow's page opens.
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
      // An invalid definition answers its problems one by one, named by their place in the definition.
      if (failure instanceof ApiError && failure.status === 400 && !failure.fields.name && parsed.value !== undefined) setDefinitionError(failure.message)
      setBusy(false)
    }
  }

  const apiError = error instanceof ApiError ? error : undefined
  return (
    <form className="card flows-create" aria-labelledby="flows-create-title" onSubmit={(event) => void submit(event)} noValidate>
      <h2 id="flows-create-title">{t('flows.create.title')}</h2>
      <Field label={t('common.name')} hint={t('flows.create.nameHint')} error={apiError?.fields.name}>
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
