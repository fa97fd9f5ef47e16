import { useState, type FormEvent } from 'react'
import { Link, useLocation, useParams, useSearch } from 'wouter'
import { api, unwrap } from '../../api'
import { useAsync } from '../../components/async'
import { DateTime, ErrorNotice, errorAt, Field, FormError, Loading, PageHeader, useFieldErrors } from '../../components/ui'
import { useT } from '../../i18n'
import type { Card, CardValue, Pipeline, PipelineField } from './api-types'
import { cardTitle, inputText, tagsFromInput, valueFromInput } from './card-values'

/** Create a card (`/:pipelineId/cards/new?stageId=…`) or change one (`/:pipelineId/cards/:cardId`). */
export function CardScreen() {
  const { pipelineId, cardId } = useParams<{ pipelineId: string; cardId?: string }>()
  const loaded = useAsync(
    () =>
      Promise.all([
        unwrap(api.GET('/v1/kanban/pipelines/{id}', { params: { path: { id: pipelineId } } })),
        cardId ? unwrap(api.GET('/v1/kanban/cards/{id}', { params: { path: { id: cardId } } })) : Promise.resolve(undefined),
      ]),
    [pipelineId, cardId],
  )
  if (loaded.error) return <ErrorNotice error={loaded.error} onRetry={loaded.reload} />
  if (!loaded.data) return <Loading />
  const [pipeline, card] = loaded.data
  return <CardForm key={card?.id ?? 'new'} pipeline={pipeline} card={card} />
}

/** Each field's input holds text, a boolean field's holds yes/no/unset. */
type Inputs = Record<string, string>

const BOOLEAN_INPUT = { unset: '', yes: 'true', no: 'false' } as const

function inputsOf(pipeline: Pipeline, card: Card | undefined): Inputs {
  return Object.fromEntries(
    pipeline.fields.map((field) => {
      const value = card?.values[field.id]
      return [field.id, typeof value === 'boolean' ? String(value) : inputText(value)]
    }),
  )
}

function valueOf(field: PipelineField, input: string): CardValue | undefined {
  if (field.type === 'boolean') return input === '' ? undefined : input === 'true'
  return valueFromInput(field, input)
}

/** The values to send: all given ones; on a change, `null` for a value the form cleared. */
function valuesOf(pipeline: Pipeline, inputs: Inputs, card: Card | undefined): Record<string, CardValue | null> {
  const values: Record<string, CardValue | null> = {}
  for (const field of pipeline.fields) {
    const value = valueOf(field, inputs[field.id] ?? '')
    if (value !== undefined) values[field.id] = value
    else if (card?.values[field.id] !== undefined) values[field.id] = null
  }
  return values
}

function CardForm({ pipeline, card }: { pipeline: Pipeline; card: Card | undefined }) {
  const t = useT()
  const [, navigate] = useLocation()
  const search = new URLSearchParams(useSearch())
  const stages = [...pipeline.stages].sort((a, b) => a.order - b.order)
  const [stageId, setStageId] = useState(card?.stageId ?? search.get('stageId') ?? stages[0]?.id ?? '')
  const [inputs, setInputs] = useState<Inputs>(() => inputsOf(pipeline, card))
  const [tags, setTags] = useState(card?.tags.join(', ') ?? '')
  const [saving, setSaving] = useState(false)
  const [error, setError] = useState<unknown>()
  const errors = useFieldErrors(error)
  const shownOnFields = ['stageId', 'tags', 'tags.*', ...pipeline.fields.map((field) => `values.${field.id}`)]
  const board = `/${pipeline.id}`

  async function submit(event: FormEvent) {
    event.preventDefault()
    setSaving(true)
    setError(undefined)
    const values = valuesOf(pipeline, inputs, card)
    const tagList = tagsFromInput(tags)
    try {
      if (card) await unwrap(api.PATCH('/v1/kanban/cards/{id}', { params: { path: { id: card.id } }, body: { stageId, values, tags: tagList } }))
      else await unwrap(api.POST('/v1/kanban/pipelines/{pipelineId}/cards', { params: { path: { pipelineId: pipeline.id } }, body: { stageId, values, tags: tagList } }))
      navigate(board)
    } catch (failure) {
      setError(failure)
      setSaving(false)
    }
  }

  async function remove() {
    if (!card || !window.confirm(t('kanban.cardForm.confirmDelete', { title: cardTitle(pipeline, card) }))) return
    try {
      await unwrap(api.DELETE('/v1/kanban/cards/{id}', { params: { path: { id: card.id } } }))
      navigate(board)
    } catch (failure) {
      setError(failure)
    }
  }

  return (
    <section>
      <PageHeader title={card ? t('kanban.cardForm.editTitle', { title: cardTitle(pipeline, card) }) : t('kanban.cardForm.newTitle', { pipeline: pipeline.name })}>
        <Link href={board} className="button-link secondary">{t('kanban.form.backToBoard')}</Link>
      </PageHeader>
      {card && (
        <dl className="kanban-meta">
          <div>
            <dt>{t('common.createdAt')}</dt>
            <dd>
              <DateTime value={card.createdAt} />
            </dd>
          </div>
          <div>
            <dt>{t('kanban.cardForm.movedAt')}</dt>
            <dd>
              <DateTime value={card.movedAt} />
            </dd>
          </div>
          <div>
            <dt>{t('kanban.cardForm.session')}</dt>
            <dd className="mono">{card.sessionId ?? t('kanban.cardForm.noSession')}</dd>
          </div>
        </dl>
      )}
      <form className="card kanban-form" onSubmit={submit} noValidate>
        <Field label={t('kanban.cardForm.stage')} error={errors.stageId}>
          {(props) => (
            <select {...props} value={stageId} onChange={(event) => setStageId(event.target.value)}>
              {stages.map((stage) => (
                <option key={stage.id} value={stage.id}>
                  {stage.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        {pipeline.fields.map((field) => (
          <ValueField
            key={field.id}
            field={field}
            input={inputs[field.id] ?? ''}
            error={errors[`values.${field.id}`]}
            onChange={(input) => setInputs((all) => ({ ...all, [field.id]: input }))}
          />
        ))}
        <Field label={t('kanban.cardForm.tags')} hint={t('kanban.cardForm.tagsHint')} error={errorAt(errors, 'tags')}>
          {(props) => <input {...props} value={tags} onChange={(event) => setTags(event.target.value)} />}
        </Field>
        <FormError error={error} shownOnFields={shownOnFields} />
        <div className="page-actions">
          <button type="submit" className="primary" disabled={saving}>
            {saving ? t('common.saving') : card ? t('common.save') : t('common.create')}
          </button>
          {card && (
            <button type="button" className="danger" onClick={() => void remove()}>
              {t('kanban.cardForm.delete')}
            </button>
          )}
        </div>
      </form>
    </section>
  )
}

const INPUT_TYPES: Partial<Record<PipelineField['type'], string>> = { number: 'number', currency: 'number', date: 'date', email: 'email', phone: 'tel' }

/** One field's input, by its type; a required field says so in its label. */
function ValueField({ field, input, error, onChange }: { field: PipelineField; input: string; error?: string; onChange(input: string): void }) {
  const t = useT()
  const label = `${field.name}${field.currency ? ` (${field.currency})` : ''}${field.required ? ` ${t('kanban.cardForm.required')}` : ''}`
  return (
    <Field label={label} error={error}>
      {(props) => {
        if (field.type === 'boolean') {
          return (
            <select {...props} value={input} onChange={(event) => onChange(event.target.value)}>
              <option value={BOOLEAN_INPUT.unset}>{t('kanban.cardForm.unset')}</option>
              <option value={BOOLEAN_INPUT.yes}>{t('common.yes')}</option>
              <option value={BOOLEAN_INPUT.no}>{t('common.no')}</option>
            </select>
          )
        }
        if (field.type === 'select') {
          return (
            <select {...props} value={input} onChange={(event) => onChange(event.target.value)}>
              <option value="">{t('kanban.cardForm.unset')}</option>
              {field.options?.map((option) => (
                <option key={option} value={option}>
                  {option}
                </option>
              ))}
            </select>
          )
        }
        return <input {...props} type={INPUT_TYPES[field.type] ?? 'text'} step={field.type === 'currency' || field.type === 'number' ? 'any' : undefined} value={input} onChange={(event) => onChange(event.target.value)} />
      }}
    </Field>
  )
}
