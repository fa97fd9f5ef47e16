import { useState } from 'react'
import * as setVariable from '../../../../src/domain/nodes/set-variable.js'
import { Field, NumberInput, Select, VarText } from '../forms/fields'
import { useWorkspace } from '../workspace'
import { clip, nodeStrings, type FormProps, type NodeUi } from './node-ui'
import { NODE_TYPE_NAMES } from '../../shared/node-names'

const strings = nodeStrings({
  en: {
    name: NODE_TYPE_NAMES.en.setVariable,
    description: 'Assigns a variable',
    'node.sets': '{name} = {value}',
    'set.variable': 'Variable',
    'set.valueType': 'Value type',
    'set.value': 'Value',
    'set.invalidJson': 'Not a JSON object',
    'set.true': 'true',
    'set.false': 'false',
  },
  pt: {
    name: NODE_TYPE_NAMES.pt.setVariable,
    description: 'Atribui uma variável',
    'node.sets': '{name} = {value}',
    'set.variable': 'Variável',
    'set.valueType': 'Tipo do valor',
    'set.value': 'Valor',
    'set.invalidJson': 'Não é um objeto JSON',
    'set.true': 'verdadeiro',
    'set.false': 'falso',
  },
})

type Data = setVariable.Data

function SetVariableSummary({ data }: { data: Partial<Data> }) {
  const t = strings.useT()
  return <p className="preview">{t('node.sets', { name: data.variable || '?', value: clip(typeof data.value === 'object' ? JSON.stringify(data.value) : String(data.value ?? ''), 40) })}</p>
}

type ValueKind = 'string' | 'number' | 'boolean' | 'object'
const valueKind = (value: unknown): ValueKind =>
  typeof value === 'number' ? 'number' : typeof value === 'boolean' ? 'boolean' : typeof value === 'object' && value !== null ? 'object' : 'string'

function SetVariableForm({ data, onChange }: FormProps<Data>) {
  const t = strings.useT()
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
        placeholder={t('vars.choose')}
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

export const setVariableUi: NodeUi<Data> = {
  icon: '=',
  strings,
  exits: setVariable.exits,
  newData: () => ({ variable: '', value: '' }),
  Summary: SetVariableSummary,
  Form: SetVariableForm,
}
