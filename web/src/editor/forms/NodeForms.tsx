import { useState } from 'react'
import { useT } from '../i18n'
import {
  INPUT_KINDS,
  NUMERIC_OPERATORS,
  OPERATORS,
  type CardValue,
  type ConditionData,
  type KanbanMoveData,
  type MessageData,
  type OutgoingMessage,
  type QuestionData,
  type Rule,
  type SetVariableData,
  type TransferData,
} from '../flow/types'
import { useWorkspace } from '../workspace'
import { Field, ListControls, NumberInput, Select, TagsInput, TextInput, VarText, moveItem, replaceAt, useReadableVariables } from './fields'
import { CardValueInput } from './CardValueInput'
import { MessageComposer, kindOf, messageOfKind } from './MessageComposer'

export interface FormProps<T> {
  data: T
  onChange(data: T): void
  /** An exit (reply id, rule id) was renamed: its edge follows it. */
  onRenameExit(from: string, to: string): void
}

export function MessageForm({ data, onChange }: FormProps<MessageData>) {
  const t = useT()
  const messages = data.messages ?? []
  const set = (next: OutgoingMessage[]) => onChange({ ...data, messages: next })
  return (
    <fieldset className="group">
      <legend>{t('msg.messages')}</legend>
      {messages.map((message, i) => (
        <div className="item" key={i}>
          <div className="item-head">
            <span>#{i + 1}</span>
            <ListControls index={i} count={messages.length} canRemove={messages.length > 1} onMove={(a, b) => set(moveItem(messages, a, b))} onRemove={() => set(messages.filter((_, j) => j !== i))} />
          </div>
          <MessageComposer value={message} onChange={(m) => set(replaceAt(messages, i, m))} />
        </div>
      ))}
      <button type="button" className="add" onClick={() => set([...messages, messageOfKind('text')])}>
        + {t('msg.add')}
      </button>
    </fieldset>
  )
}

export function QuestionForm({ data, onChange, onRenameExit }: FormProps<QuestionData>) {
  const t = useT()
  const { variables } = useWorkspace()
  const choice = data.input?.kind === 'choice'
  const prompt = data.prompt ?? messageOfKind('text')
  return (
    <>
      <Select
        label={t('q.input')}
        value={data.input?.kind ?? 'text'}
        options={INPUT_KINDS.map((k) => ({ value: k, label: t(`input.${k}`) }))}
        onChange={(kind) => {
          // A choice needs buttons or a list to choose from.
          const needsChoices = kind === 'choice' && kindOf(prompt) !== 'button' && kindOf(prompt) !== 'list'
          onChange({ ...data, input: { kind }, prompt: needsChoices ? messageOfKind('button', prompt) : prompt })
        }}
      />
      {choice && <p className="hint">{t('q.choiceHint')}</p>}
      <fieldset className="group">
        <legend>{t('q.prompt')}</legend>
        <MessageComposer value={prompt} kinds={choice ? ['button', 'list'] : undefined} onChange={(p) => onChange({ ...data, prompt: p })} onRenameId={choice ? onRenameExit : undefined} />
      </fieldset>
      <Select
        label={t('q.saveAs')}
        value={data.saveAs ?? '-'}
        options={[{ value: '-', label: t('q.none') }, ...variables.map((v) => ({ value: v.name, label: `${v.name} (${t(`vtype.${v.type}`)})` }))]}
        onChange={(name) => {
          const { saveAs: _s, ...rest } = data
          onChange(name === '-' ? (rest as QuestionData) : { ...rest, saveAs: name })
        }}
      />
      <NumberInput label={t('q.maxRetries')} min={0} max={10} value={data.maxRetries} onChange={(maxRetries) => onChange({ ...data, maxRetries })} />
      <label className="check">
        <input
          type="checkbox"
          checked={data.retryMessage !== undefined}
          onChange={(e) => {
            const { retryMessage: _r, ...rest } = data
            onChange(e.target.checked ? { ...rest, retryMessage: messageOfKind('text') } : (rest as QuestionData))
          }}
        />
        {t('q.useRetry')}
      </label>
      {data.retryMessage && (
        <fieldset className="group">
          <legend>{t('q.retryMessage')}</legend>
          <MessageComposer value={data.retryMessage} onChange={(retryMessage) => onChange({ ...data, retryMessage })} />
        </fieldset>
      )}
    </>
  )
}

const nextRuleId = (rules: Rule[]) => {
  for (let n = rules.length + 1; ; n++) if (!rules.some((r) => r.id === `rule_${n}`)) return `rule_${n}`
}

export function ConditionForm({ data, onChange, onRenameExit }: FormProps<ConditionData>) {
  const t = useT()
  const readable = useReadableVariables()
  const rules = data.rules ?? []
  const set = (next: Rule[]) => onChange({ ...data, rules: next })
  return (
    <fieldset className="group">
      <legend>{t('cond.rules')}</legend>
      <p className="hint">{t('cond.hint')}</p>
      {rules.map((rule, i) => {
        const setRule = (next: Rule) => set(replaceAt(rules, i, next))
        const numeric = NUMERIC_OPERATORS.includes(rule.operator)
        return (
          <div className="item" key={i}>
            <div className="item-head">
              <span>#{i + 1}</span>
              <ListControls index={i} count={rules.length} canRemove={rules.length > 1} onMove={(a, b) => set(moveItem(rules, a, b))} onRemove={() => set(rules.filter((_, j) => j !== i))} />
            </div>
            <TextInput
              label={t('cond.exitId')}
              value={rule.id}
              onChange={(id) => {
                onRenameExit(rule.id, id)
                setRule({ ...rule, id })
              }}
            />
            <Select label={t('cond.variable')} value={rule.variable} placeholder={t('cond.choose')} options={readable.map((name) => ({ value: name, label: name }))} onChange={(variable) => setRule({ ...rule, variable })} />
            <Select
              label={t('cond.operator')}
              value={rule.operator}
              options={OPERATORS.map((op) => ({ value: op, label: t(`op.${op}`) }))}
              onChange={(operator) => {
                const { value: _v, ...rest } = rule
                if (operator === 'exists') setRule({ ...rest, operator })
                else if (NUMERIC_OPERATORS.includes(operator)) setRule({ ...rest, operator, value: Number(rule.value) || 0 })
                else setRule({ ...rest, operator, value: rule.value === undefined ? '' : String(rule.value) })
              }}
            />
            {rule.operator !== 'exists' &&
              (numeric ? (
                <NumberInput label={t('cond.value')} value={typeof rule.value === 'number' ? rule.value : Number(rule.value) || 0} onChange={(value) => setRule({ ...rule, value: value ?? 0 })} />
              ) : (
                <TextInput label={t('cond.value')} value={String(rule.value ?? '')} onChange={(value) => setRule({ ...rule, value })} />
              ))}
          </div>
        )
      })}
      <button type="button" className="add" onClick={() => set([...rules, { id: nextRuleId(rules), variable: 'lastMessage', operator: 'equals', value: '' }])}>
        + {t('cond.addRule')}
      </button>
    </fieldset>
  )
}

type ValueKind = 'string' | 'number' | 'boolean' | 'object'
const valueKind = (value: unknown): ValueKind =>
  typeof value === 'number' ? 'number' : typeof value === 'boolean' ? 'boolean' : typeof value === 'object' && value !== null ? 'object' : 'string'

export function SetVariableForm({ data, onChange }: FormProps<SetVariableData>) {
  const t = useT()
  const { variables } = useWorkspace()
  const kind = valueKind(data.value)
  const [json, setJson] = useState(kind === 'object' ? JSON.stringify(data.value, null, 2) : '{}')
  const [jsonError, setJsonError] = useState(false)
  const setKind = (next: ValueKind) => {
    const value = next === 'number' ? 0 : next === 'boolean' ? true : next === 'object' ? {} : ''
    if (next === 'object') setJson('{}')
    onChange({ ...data, value })
  }
  return (
    <>
      <Select
        label={t('set.variable')}
        value={data.variable ?? ''}
        placeholder={t('cond.choose')}
        options={variables.map((v) => ({ value: v.name, label: `${v.name} (${t(`vtype.${v.type}`)})` }))}
        onChange={(variable) => {
          const type = variables.find((v) => v.name === variable)?.type
          onChange({ ...data, variable })
          if (type && type !== kind) setKind(type)
        }}
      />
      <Select
        label={t('set.valueType')}
        value={kind}
        options={(['string', 'number', 'boolean', 'object'] as const).map((k) => ({ value: k, label: t(`vtype.${k}`) }))}
        onChange={setKind}
      />
      {kind === 'string' && <VarText label={t('set.value')} multiline value={String(data.value)} onChange={(value) => onChange({ ...data, value })} />}
      {kind === 'number' && <NumberInput label={t('set.value')} value={data.value as number} onChange={(value) => onChange({ ...data, value: value ?? 0 })} />}
      {kind === 'boolean' && (
        <Select
          label={t('set.value')}
          value={data.value ? 'true' : 'false'}
          options={[
            { value: 'true', label: t('set.true') },
            { value: 'false', label: t('set.false') },
          ]}
          onChange={(value) => onChange({ ...data, value: value === 'true' })}
        />
      )}
      {kind === 'object' && (
        <Field label={t('set.value')} error={jsonError ? t('set.invalidJson') : undefined}>
          <textarea
            rows={6}
            className="code"
            value={json}
            onChange={(e) => {
              setJson(e.target.value)
              try {
                const parsed: unknown = JSON.parse(e.target.value)
                const ok = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
                setJsonError(!ok)
                if (ok) onChange({ ...data, value: parsed as Record<string, unknown> })
              } catch {
                setJsonError(true)
              }
            }}
          />
        </Field>
      )}
    </>
  )
}

export function TransferForm({ data, onChange }: FormProps<TransferData>) {
  const t = useT()
  const { sectors, createSector } = useWorkspace()
  const [name, setName] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string>()
  return (
    <>
      <Select
        label={t('tr.targetType')}
        value={data.targetType ?? 'sector'}
        options={[
          { value: 'sector', label: t('tr.sector') },
          { value: 'agent', label: t('tr.agent') },
        ]}
        onChange={(targetType) => onChange({ ...data, targetType, targetId: '' })}
      />
      {data.targetType === 'agent' ? (
        <TextInput label={t('tr.agentId')} value={data.targetId ?? ''} onChange={(targetId) => onChange({ ...data, targetId: targetId.trim() })} />
      ) : (
        <>
          <Select label={t('tr.sector')} value={data.targetId ?? ''} placeholder={t('tr.chooseSector')} options={sectors.map((s) => ({ value: s.id, label: s.name }))} onChange={(targetId) => onChange({ ...data, targetId })} />
          <fieldset className="group">
            <legend>{t('tr.newSector')}</legend>
            <div className="row">
              <TextInput label={t('tr.sectorName')} value={name} onChange={setName} />
              <button
                type="button"
                disabled={busy || !name.trim()}
                onClick={async () => {
                  setBusy(true)
                  setError(undefined)
                  try {
                    const id = await createSector(name.trim())
                    setName('')
                    onChange({ ...data, targetType: 'sector', targetId: id })
                  } catch (e) {
                    setError(e instanceof Error ? e.message : String(e))
                  } finally {
                    setBusy(false)
                  }
                }}
              >
                {t('tr.create')}
              </button>
            </div>
            {error && <p className="field-error">{error}</p>}
          </fieldset>
        </>
      )}
    </>
  )
}

export function KanbanMoveForm({ data, onChange }: FormProps<KanbanMoveData>) {
  const t = useT()
  const { pipelines } = useWorkspace()
  if (pipelines.length === 0) return <p className="hint">{t('kb.noPipelines')}</p>
  const pipeline = pipelines.find((p) => p.id === data.pipelineId)
  const values = data.values ?? {}
  const setValue = (fieldId: string, value: CardValue | undefined) => {
    const next = { ...values }
    if (value === undefined) delete next[fieldId]
    else next[fieldId] = value
    const { values: _v, ...rest } = data
    onChange(Object.keys(next).length ? { ...rest, values: next } : (rest as KanbanMoveData))
  }
  return (
    <>
      <Select
        label={t('kb.pipeline')}
        value={data.pipelineId ?? ''}
        placeholder={t('kb.choosePipeline')}
        options={pipelines.map((p) => ({ value: p.id, label: p.name }))}
        onChange={(pipelineId) => {
          const first = [...(pipelines.find((p) => p.id === pipelineId)?.stages ?? [])].sort((a, b) => a.order - b.order)[0]
          const { values: _v, ...rest } = data
          onChange({ ...rest, pipelineId, stageId: first?.id ?? '' })
        }}
      />
      {pipeline && (
        <Select
          label={t('kb.stage')}
          value={data.stageId ?? ''}
          placeholder={t('kb.chooseStage')}
          options={[...pipeline.stages].sort((a, b) => a.order - b.order).map((s) => ({ value: s.id, label: s.name }))}
          onChange={(stageId) => onChange({ ...data, stageId })}
        />
      )}
      {pipeline && pipeline.fields.length > 0 && (
        <fieldset className="group">
          <legend>{t('kb.values')}</legend>
          {[...pipeline.fields]
            .sort((a, b) => a.order - b.order)
            .map((field) => (
              <CardValueInput key={field.id} field={field} value={values[field.id]} onChange={(value) => setValue(field.id, value)} />
            ))}
        </fieldset>
      )}
      <TagsInput
        label={t('kb.tags')}
        value={data.tags}
        onChange={(tags) => {
          const { tags: _t, ...rest } = data
          onChange(tags ? { ...rest, tags } : (rest as KanbanMoveData))
        }}
      />
    </>
  )
}
