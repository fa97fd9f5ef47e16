import { useState, type FormEvent } from 'react'
import { Link, useLocation, useParams } from 'wouter'
import { api, unwrap } from '../../api'
import { useAsync } from '../../components/async'
import { ErrorNotice, errorAt, Field, FormError, Loading, PageHeader, useFieldErrors } from '../../components/ui'
import { useT } from '../../i18n'
import { usePreferences } from '../../preferences'
import { FIELD_TYPES, type FieldType, type Pipeline } from './api-types'
import { currencyChoices, defaultCurrency } from './currencies'

const DEFAULT_COLOR = '#9e9e9e'

/** A stage or field as the form holds it; `id` is set for one the pipeline already has. */
interface StageDraft {
  key: string
  id?: string
  name: string
  color: string
}
interface FieldDraft {
  key: string
  id?: string
  name: string
  type: FieldType
  required: boolean
  isFeatured: boolean
  currency: string
  options: string
}

let nextKey = 0
const newKey = () => `draft-${++nextKey}`
const newStage = (name = ''): StageDraft => ({ key: newKey(), name, color: DEFAULT_COLOR })
// A currency field starts with a currency, so adding one cannot fail for the want of it.
const newField = (currency: string): FieldDraft => ({ key: newKey(), name: '', type: 'text', required: false, isFeatured: true, currency, options: '' })

function draftsOf(pipeline: Pipeline): { name: string; stages: StageDraft[]; fields: FieldDraft[] } {
  return {
    name: pipeline.name,
    stages: pipeline.stages.map((stage) => ({ key: stage.id, id: stage.id, name: stage.name, color: stage.color.toLowerCase() })),
    fields: pipeline.fields.map((field) => ({
      key: field.id,
      id: field.id,
      name: field.name,
      type: field.type,
      required: field.required,
      isFeatured: field.isFeatured,
      currency: field.currency ?? '',
      options: field.options?.join(', ') ?? '',
    })),
  }
}

/** The request body: order is each item's place in the form; currency and options only where the type has them. */
function bodyOf(name: string, stages: StageDraft[], fields: FieldDraft[]) {
  return {
    name,
    stages: stages.map((stage, order) => ({ ...(stage.id ? { id: stage.id } : {}), name: stage.name, color: stage.color, order })),
    fields: fields.map((field, order) => ({
      ...(field.id ? { id: field.id } : {}),
      name: field.name,
      type: field.type,
      required: field.required,
      isFeatured: field.isFeatured,
      order,
      ...(field.type === 'currency' ? { currency: field.currency } : {}),
      ...(field.type === 'select' ? { options: field.options.split(',').map((option) => option.trim()).filter((option) => option !== '') } : {}),
    })),
  }
}

const moved = <T,>(items: T[], from: number, to: number): T[] => {
  if (to < 0 || to >= items.length) return items
  const next = [...items]
  const [item] = next.splice(from, 1)
  next.splice(to, 0, item!)
  return next
}

/** Create a pipeline (`/new`) or change one (`/:pipelineId/edit`). */
export function PipelineScreen() {
  const { pipelineId } = useParams<{ pipelineId?: string }>()
  const existing = useAsync(
    () => (pipelineId ? unwrap(api.GET('/v1/kanban/pipelines/{id}', { params: { path: { id: pipelineId } } })) : Promise.resolve(undefined)),
    [pipelineId],
  )
  if (existing.error) return <ErrorNotice error={existing.error} onRetry={existing.reload} />
  if (pipelineId && !existing.data) return <Loading />
  return <PipelineForm key={existing.data?.updatedAt ?? 'new'} pipeline={existing.data} />
}

function PipelineForm({ pipeline }: { pipeline: Pipeline | undefined }) {
  const t = useT()
  const [, navigate] = useLocation()
  const initial = pipeline ? draftsOf(pipeline) : { name: '', stages: [newStage(t('kanban.form.defaultStageNew')), newStage(t('kanban.form.defaultStageDone'))], fields: [] }
  const [name, setName] = useState(initial.name)
  const [stages, setStages] = useState<StageDraft[]>(initial.stages)
  const [fields, setFields] = useState<FieldDraft[]>(initial.fields)
  const [saving, setSaving] = useState(false)
  const [error, setError] = useState<unknown>()
  const errors = useFieldErrors(error)
  const { lang } = usePreferences()

  const changeStage = (index: number, change: Partial<StageDraft>) => setStages((all) => all.map((stage, i) => (i === index ? { ...stage, ...change } : stage)))
  const changeField = (index: number, change: Partial<FieldDraft>) => setFields((all) => all.map((field, i) => (i === index ? { ...field, ...change } : field)))

  async function submit(event: FormEvent) {
    event.preventDefault()
    setSaving(true)
    setError(undefined)
    try {
      const body = bodyOf(name, stages, fields)
      const saved = pipeline
        ? await unwrap(api.PATCH('/v1/kanban/pipelines/{id}', { params: { path: { id: pipeline.id } }, body }))
        : await unwrap(api.POST('/v1/kanban/pipelines', { body }))
      navigate(`/${saved.id}`)
    } catch (failure) {
      setError(failure)
      setSaving(false)
    }
  }

  const title = pipeline ? t('kanban.form.editTitle', { name: pipeline.name }) : t('kanban.form.newTitle')
  return (
    <section>
      <PageHeader title={title}>
        <Link href={pipeline ? `/${pipeline.id}` : '/'} className="button-link secondary">{pipeline ? t('kanban.form.backToBoard') : t('kanban.form.backToList')}</Link>
      </PageHeader>
      <form className="card kanban-form" onSubmit={submit} noValidate>
        <Field label={t('common.name')} error={errors.name}>
          {(props) => <input {...props} value={name} onChange={(event) => setName(event.target.value)} />}
        </Field>

        <fieldset className="kanban-list">
          <legend>{t('kanban.form.stages')}</legend>
          {errors.stages && (
            <p className="field-error" role="alert">
              {errors.stages}
            </p>
          )}
          {stages.map((stage, index) => {
            const label = stage.name || t('kanban.form.stageNumber', { number: index + 1 })
            return (
              <div className="kanban-item" key={stage.key} role="group" aria-label={t('kanban.form.stageNumber', { number: index + 1 })}>
                <div className="form-row">
                  <Field label={t('kanban.form.stageName', { number: index + 1 })} error={errors[`stages.${index}.name`] ?? errors[`stages.${index}.id`] ?? errors[`stages.${index}`]}>
                    {(props) => <input {...props} value={stage.name} onChange={(event) => changeStage(index, { name: event.target.value })} />}
                  </Field>
                  <Field label={t('kanban.form.stageColor', { number: index + 1 })} error={errors[`stages.${index}.color`]}>
                    {(props) => <input {...props} type="color" className="kanban-color" value={stage.color} onChange={(event) => changeStage(index, { color: event.target.value })} />}
                  </Field>
                </div>
                <ItemButtons
                  label={label}
                  first={index === 0}
                  last={index === stages.length - 1}
                  onUp={() => setStages((all) => moved(all, index, index - 1))}
                  onDown={() => setStages((all) => moved(all, index, index + 1))}
                  onRemove={stages.length > 1 ? () => setStages((all) => all.filter((_, i) => i !== index)) : undefined}
                />
              </div>
            )
          })}
          <button type="button" className="add" onClick={() => setStages((all) => [...all, newStage()])}>
            {t('kanban.form.addStage')}
          </button>
        </fieldset>

        <fieldset className="kanban-list">
          <legend>{t('kanban.form.fields')}</legend>
          <p className="hint">{t('kanban.form.fieldsHint')}</p>
          {fields.map((field, index) => {
            const number = index + 1
            const at = `fields.${index}`
            return (
              <div className="kanban-item" key={field.key} role="group" aria-label={t('kanban.form.fieldNumber', { number })}>
                <div className="form-row">
                  <Field label={t('kanban.form.fieldName', { number })} error={errors[`${at}.name`] ?? errors[`${at}.id`] ?? errors[at]}>
                    {(props) => <input {...props} value={field.name} onChange={(event) => changeField(index, { name: event.target.value })} />}
                  </Field>
                  <Field label={t('kanban.form.fieldType', { number })} hint={field.id ? t('kanban.form.typeKept') : undefined} error={errors[`${at}.type`]}>
                    {(props) => (
                      <select {...props} value={field.type} disabled={field.id !== undefined} onChange={(event) => changeField(index, { type: event.target.value as FieldType })}>
                        {FIELD_TYPES.map((type) => (
                          <option key={type} value={type}>
                            {t(`kanban.type.${type}`)}
                          </option>
                        ))}
                      </select>
                    )}
                  </Field>
                  {field.type === 'currency' && (
                    <Field label={t('kanban.form.fieldCurrency', { number })} hint={t('kanban.form.currencyHint')} error={errors[`${at}.currency`]}>
                      {(props) => <CurrencySelect {...props} value={field.currency} onChange={(currency) => changeField(index, { currency })} />}
                    </Field>
                  )}
                  {field.type === 'select' && (
                    <Field label={t('kanban.form.fieldOptions', { number })} hint={t('kanban.form.optionsHint')} error={errorAt(errors, `${at}.options`)}>
                      {(props) => <input {...props} value={field.options} onChange={(event) => changeField(index, { options: event.target.value })} />}
                    </Field>
                  )}
                </div>
                <div className="kanban-checks">
                  <label>
                    <input type="checkbox" checked={field.required} onChange={(event) => changeField(index, { required: event.target.checked })} />
                    {t('kanban.form.fieldRequired', { number })}
                  </label>
                  <label>
                    <input type="checkbox" checked={field.isFeatured} onChange={(event) => changeField(index, { isFeatured: event.target.checked })} />
                    {t('kanban.form.fieldFeatured', { number })}
                  </label>
                </div>
                <ItemButtons
                  label={field.name || t('kanban.form.fieldNumber', { number })}
                  first={index === 0}
                  last={index === fields.length - 1}
                  onUp={() => setFields((all) => moved(all, index, index - 1))}
                  onDown={() => setFields((all) => moved(all, index, index + 1))}
                  onRemove={() => setFields((all) => all.filter((_, i) => i !== index))}
                />
              </div>
            )
          })}
          <button type="button" className="add" onClick={() => setFields((all) => [...all, newField(defaultCurrency(lang))])}>
            {t('kanban.form.addField')}
          </button>
        </fieldset>

        <FormError error={error} shownOnFields={shownOnFields(stages.length, fields)} />
        <div className="page-actions">
          <button type="submit" className="primary" disabled={saving}>
            {saving ? t('common.saving') : pipeline ? t('common.save') : t('common.create')}
          </button>
        </div>
      </form>
    </section>
  )
}

/** Where the form shows what a refused save says: the name, each stage's and each field's inputs. */
function shownOnFields(stageCount: number, fields: FieldDraft[]): string[] {
  const stages = Array.from({ length: stageCount }, (_, i) => [`stages.${i}.name`, `stages.${i}.id`, `stages.${i}.color`, `stages.${i}`])
  const items = fields.map((field, i) => {
    const at = `fields.${i}`
    return [`${at}.name`, `${at}.id`, at, `${at}.type`, ...(field.type === 'currency' ? [`${at}.currency`] : []), ...(field.type === 'select' ? [`${at}.options`, `${at}.options.*`] : [])]
  })
  return ['name', 'stages', ...stages.flat(), ...items.flat()]
}

/** A currency picker: the common currencies first, then every other, by code and name. */
function CurrencySelect({ value, onChange, ...control }: { id: string; value: string; onChange(code: string): void; 'aria-invalid': boolean | undefined; 'aria-describedby': string | undefined }) {
  const t = useT()
  const { lang } = usePreferences()
  const { common, all } = currencyChoices(lang, value || undefined)
  const option = ({ code, label }: { code: string; label: string }) => (
    <option key={code} value={code}>
      {label}
    </option>
  )
  return (
    <select {...control} value={value} onChange={(event) => onChange(event.target.value)}>
      <optgroup label={t('kanban.form.currencyCommon')}>{common.map(option)}</optgroup>
      <optgroup label={t('kanban.form.currencyAll')}>{all.map(option)}</optgroup>
    </select>
  )
}

function ItemButtons({ label, first, last, onUp, onDown, onRemove }: { label: string; first: boolean; last: boolean; onUp(): void; onDown(): void; onRemove?: () => void }) {
  const t = useT()
  return (
    <div className="kanban-item-buttons">
      <button type="button" className="secondary" disabled={first} onClick={onUp} aria-label={t('kanban.form.moveUp', { name: label })}>
        ↑
      </button>
      <button type="button" className="secondary" disabled={last} onClick={onDown} aria-label={t('kanban.form.moveDown', { name: label })}>
        ↓
      </button>
      {onRemove && (
        <button type="button" className="danger" onClick={onRemove} aria-label={t('kanban.form.remove', { name: label })}>
          {t('kanban.form.removeShort')}
        </button>
      )}
    </div>
  )
}
