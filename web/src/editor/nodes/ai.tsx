import { AI_CONNECTION_LIMITS } from '../../../../src/domain/ai-connection.js'
import * as ai from '../../../../src/domain/nodes/ai.js'
import { ERROR_HANDLE } from '../../../../src/domain/nodes/http-request.js'
import { ListControls, Select, TextInput, VarText, WholeInRange, moveItem, replaceAt } from '../forms/fields'
import { useAnswer, useWorkspace } from '../workspace'
import { AiTry } from './ai-try'
import { aiExitWord, aiStrings as strings } from './ai-strings'
import { clip, type FormProps, type NodeUi } from './node-ui'

type Data = ai.Data
type Label = ai.Label
type Field = ai.Field
type T = ReturnType<typeof strings.useT>

const LIMITS = ai.AI_STEP_LIMITS
/** The exits of the step itself, which no label may take. */
const OWN_HANDLES: readonly string[] = [ai.OTHER_HANDLE, ERROR_HANDLE]

/** The workspace's AI connections, once listed. */
const useConnections = () => useAnswer(useWorkspace().aiConnections)

/** The data without what another mode than `mode` reads: the service refuses labels outside classify, and so on. */
function inMode(data: Data, mode: ai.AiMode): Data {
  const { knowledge, history, labels, fields, saveAs, ...rest } = data
  return {
    ...rest,
    mode,
    ...(mode === 'reply' && { ...(knowledge !== undefined && { knowledge }), ...(history !== undefined && { history }) }),
    ...(mode === 'classify' && labels !== undefined && { labels }),
    ...(mode === 'extract' && fields !== undefined && { fields }),
    ...(mode !== 'extract' && saveAs !== undefined && { saveAs }),
  }
}

/** `data` with `key` set to `value`, or without it when `value` is undefined. */
function withOptional<K extends keyof Data>(data: Data, key: K, value: Data[K] | undefined): Data {
  const { [key]: _dropped, ...rest } = data
  return (value === undefined ? rest : { ...rest, [key]: value }) as Data
}

const firstLine = (text: string | undefined) => text?.trim().split('\n')[0]?.trim() ?? ''

function AiSummary({ data }: { data: Partial<Data> }) {
  const t = strings.useT()
  const connections = useConnections()
  const connection = Array.isArray(connections) ? connections.find((c) => c.id === data.connectionId) : undefined
  const named = !data.connectionId ? t('ai.noConnection') : (connection?.name ?? (connections === 'loading' ? '…' : t('ai.unknownConnection')))
  const instructions = firstLine(data.instructions)
  const saved = data.mode === 'extract' ? (data.fields ?? []).map((field) => field.variable).filter(Boolean) : data.saveAs ? [data.saveAs] : []
  return (
    <>
      <p className="preview">
        <strong>{t(`ai.mode.${data.mode ?? 'reply'}`)}</strong> · {clip(named, 40)}
      </p>
      {instructions && <p className="muted">{clip(instructions, 48)}</p>}
      {saved.length > 0 && <p className="muted">{t('ai.savesTo', { names: clip(saved.join(', '), 40) })}</p>}
    </>
  )
}

function AiForm({ data, onChange, onRenameExit }: FormProps<Data>) {
  const t = strings.useT()
  const { variables } = useWorkspace()
  const connections = useConnections()
  const listed = Array.isArray(connections) ? connections : []
  const connection = listed.find((c) => c.id === data.connectionId)
  const mode = data.mode ?? 'reply'
  return (
    <>
      <Select
        label={t('ai.connection')}
        value={data.connectionId ?? ''}
        placeholder={t('ai.chooseConnection')}
        options={listed.map((c) => ({ value: c.id, label: t('ai.connectionOption', { name: c.name, model: c.model }) }))}
        error={connections === 'refused' ? t('ai.refused') : undefined}
        hint={connections === 'loading' ? t('ai.loading') : Array.isArray(connections) && connections.length === 0 ? t('ai.noConnections') : undefined}
        onChange={(connectionId) => onChange({ ...data, connectionId })}
      />
      <Select
        label={t('ai.mode')}
        value={mode}
        options={ai.AI_MODES.map((m) => ({ value: m, label: t(`ai.mode.${m}`) }))}
        hint={t(`ai.modeHint.${mode}`)}
        onChange={(next) => onChange(inMode(data, next))}
      />
      <TextInput
        label={t('ai.model')}
        value={data.model ?? ''}
        placeholder={connection?.model}
        max={AI_CONNECTION_LIMITS.modelLength}
        hint={t('ai.modelHint')}
        onChange={(model) => onChange(withOptional(data, 'model', model.trim() || undefined))}
      />
      <VarText label={t('ai.instructions')} multiline rows={5} max={LIMITS.instructions} value={data.instructions ?? ''} hint={t('ai.instructionsHint')} onChange={(instructions) => onChange({ ...data, instructions })} />

      {mode === 'reply' && (
        <>
          <VarText
            label={t('ai.knowledge')}
            multiline
            rows={6}
            max={LIMITS.knowledge}
            value={data.knowledge ?? ''}
            hint={t('ai.knowledgeHint')}
            onChange={(knowledge) => onChange(withOptional(data, 'knowledge', knowledge === '' ? undefined : knowledge))}
          />
          <WholeInRange
            label={t('ai.history')}
            min={LIMITS.history.min}
            max={LIMITS.history.max}
            value={data.history}
            rangeText={t('ai.historyRange', { min: LIMITS.history.min, max: LIMITS.history.max, default: LIMITS.history.default })}
            onChange={(history) => onChange(withOptional(data, 'history', history))}
          />
        </>
      )}
      {mode === 'classify' && <LabelList labels={data.labels ?? []} onChange={(labels) => onChange({ ...data, labels })} onRenameExit={onRenameExit} />}
      {mode === 'extract' && <FieldList fields={data.fields ?? []} onChange={(fields) => onChange({ ...data, fields })} />}
      {mode !== 'extract' && (
        <Select
          label={t(`ai.saveAs.${mode}`)}
          value={data.saveAs ?? '-'}
          options={[{ value: '-', label: t('vars.dontSave') }, ...variables.filter((v) => v.type === 'string').map((v) => ({ value: v.name, label: v.name }))]}
          hint={t('ai.saveAsHint')}
          onChange={(name) => onChange(withOptional(data, 'saveAs', name === '-' ? undefined : name))}
        />
      )}
      <WholeInRange
        label={t('ai.timeout')}
        min={LIMITS.timeoutMs.min}
        max={LIMITS.timeoutMs.max}
        value={data.timeoutMs}
        rangeText={t('ai.timeoutRange', { min: LIMITS.timeoutMs.min, max: LIMITS.timeoutMs.max, default: LIMITS.timeoutMs.default })}
        onChange={(timeoutMs) => onChange(withOptional(data, 'timeoutMs', timeoutMs))}
      />
      <AiTry data={data} />
    </>
  )
}

/** A new label's id: label_1, label_2… the first no label has. */
const nextLabelId = (labels: readonly Label[]) => {
  for (let n = labels.length + 1; ; n++) if (!labels.some((label) => label.id === `label_${n}`)) return `label_${n}`
}

/** What is wrong with a label's id as an exit: one of the step's own, or another label's. */
function labelIdProblem(labels: readonly Label[], index: number, t: T): string | undefined {
  const { id } = labels[index]!
  if (OWN_HANDLES.includes(id)) return t('ai.labelReserved', { id })
  if (labels.findIndex((label) => label.id === id) < index) return t('ai.labelTwice')
  return undefined
}

/** Classify: the labels, each an exit whose edge follows a rename. */
function LabelList({ labels, onChange, onRenameExit }: { labels: Label[]; onChange(labels: Label[]): void; onRenameExit: FormProps<Data>['onRenameExit'] }) {
  const t = strings.useT()
  return (
    <fieldset className="group">
      <legend>{t('ai.labels')}</legend>
      <p className="hint">{t('ai.labelsHint')}</p>
      {labels.map((label, i) => (
        <div className="item" key={i} role="group" aria-label={t('ai.label', { n: i + 1 })}>
          <div className="item-head">
            <span>{t('ai.label', { n: i + 1 })}</span>
            <ListControls index={i} count={labels.length} onMove={(a, b) => onChange(moveItem(labels, a, b))} onRemove={() => onChange(labels.filter((_, j) => j !== i))} />
          </div>
          <TextInput
            label={t('ai.labelId')}
            value={label.id}
            max={LIMITS.labelId}
            error={labelIdProblem(labels, i, t)}
            onChange={(id) => {
              onRenameExit(label.id, id)
              onChange(replaceAt(labels, i, { ...label, id }))
            }}
          />
          <TextInput label={t('ai.labelDescription')} value={label.description} max={LIMITS.description} onChange={(description) => onChange(replaceAt(labels, i, { ...label, description }))} />
        </div>
      ))}
      <button type="button" className="add" disabled={labels.length >= LIMITS.labels.max} onClick={() => onChange([...labels, { id: nextLabelId(labels), description: '' }])}>
        + {t('ai.addLabel')}
      </button>
      <p className="hint">{t('ai.labelsCount', { min: LIMITS.labels.min, max: LIMITS.labels.max })}</p>
    </fieldset>
  )
}

/** Extract: the values to find, each saved in a variable of the type it saves. */
function FieldList({ fields, onChange }: { fields: Field[]; onChange(fields: Field[]): void }) {
  const t = strings.useT()
  const { variables } = useWorkspace()
  const typeOf = (name: string) => variables.find((v) => v.name === name)?.type
  return (
    <fieldset className="group">
      <legend>{t('ai.fields')}</legend>
      <p className="hint">{t('ai.fieldsHint')}</p>
      {fields.map((field, i) => {
        const set = (next: Field) => onChange(replaceAt(fields, i, next))
        const saves = ai.EXTRACTED_SAVES[field.type]
        const held = typeOf(field.variable)
        return (
          <div className="item" key={i} role="group" aria-label={t('ai.field', { n: i + 1 })}>
            <div className="item-head">
              <span>{t('ai.field', { n: i + 1 })}</span>
              <ListControls index={i} count={fields.length} onMove={(a, b) => onChange(moveItem(fields, a, b))} onRemove={() => onChange(fields.filter((_, j) => j !== i))} />
            </div>
            <Select
              label={t('ai.fieldVariable')}
              value={field.variable}
              placeholder={t('vars.choose')}
              options={variables.filter((v) => v.type !== 'object').map((v) => ({ value: v.name, label: `${v.name} (${t(`vtype.${v.type}`)})` }))}
              error={held !== undefined && held !== saves ? t('ai.typeMismatch', { type: t(`ai.type.${field.type}`), saves: t(`vtype.${saves}`) }) : undefined}
              onChange={(variable) => {
                // A variable that holds another type than the field's saves takes the first type that saves it.
                const type = typeOf(variable)
                const fits = type === undefined || ai.EXTRACTED_SAVES[field.type] === type
                set({ ...field, variable, type: fits ? field.type : (ai.EXTRACTED_TYPES.find((candidate) => ai.EXTRACTED_SAVES[candidate] === type) ?? field.type) })
              }}
            />
            <Select label={t('ai.fieldType')} value={field.type} options={ai.EXTRACTED_TYPES.map((type) => ({ value: type, label: t(`ai.type.${type}`) }))} onChange={(type) => set({ ...field, type })} />
            <TextInput label={t('ai.fieldDescription')} value={field.description} max={LIMITS.description} onChange={(description) => set({ ...field, description })} />
            <label className="check">
              <input type="checkbox" checked={field.required} onChange={(e) => set({ ...field, required: e.target.checked })} />
              {t('ai.fieldRequired')}
            </label>
          </div>
        )
      })}
      <button type="button" className="add" disabled={fields.length >= LIMITS.fields.max} onClick={() => onChange([...fields, { variable: '', type: 'string', description: '', required: true }])}>
        + {t('ai.addField')}
      </button>
      <p className="hint">{t('ai.fieldsCount', { min: LIMITS.fields.min, max: LIMITS.fields.max })}</p>
    </fieldset>
  )
}

export const aiUi: NodeUi<Data> = {
  icon: '✦',
  strings,
  exits: ai.exits,
  newData: () => ({ connectionId: '', mode: 'reply', instructions: '' }),
  Summary: AiSummary,
  Form: AiForm,
  exitLabel: (_data, exit, lang) => (exit.id === null ? undefined : aiExitWord(exit.id, lang)),
}
