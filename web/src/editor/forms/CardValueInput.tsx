import type { PipelineField } from '../api'
import { asFieldValue, FIELD_VALUE_TYPES, type CardValue } from '../flow-definition'
import { useT } from '../i18n'
import { NumberInput, Select, VarText } from './fields'

/**
 * The input of one card field's value in a kanbanMove, by the field's type: a number for a number
 * or currency field, yes/no for a boolean one, text (with `{{…}}`) for the rest. `undefined`
 * clears the value. A value the field cannot take (text saved for a number field) is shown and
 * flagged until it is replaced or cleared.
 */
export function CardValueInput({ field, value, onChange }: { field: PipelineField; value: CardValue | undefined; onChange(value: CardValue | undefined): void }) {
  const t = useT()
  const type = `${t(`ftype.${field.type}`)}${field.currency ? `, ${field.currency}` : ''}`
  const label = `${field.name} (${type})`
  const wanted = FIELD_VALUE_TYPES[field.type] ?? 'string'
  const misfit = value !== undefined && asFieldValue(field.type, value) === undefined ? String(value) : undefined

  if (wanted === 'number') {
    // A number input cannot show the text, so the message quotes it and a button clears it.
    return (
      <>
        <NumberInput label={label} step="any" value={typeof value === 'number' ? value : undefined} error={misfit === undefined ? undefined : t('kb.notNumber', { value: misfit })} onChange={onChange} />
        {misfit !== undefined && (
          <button type="button" className="secondary" onClick={() => onChange(undefined)}>
            {t('kb.clear', { name: field.name })}
          </button>
        )}
      </>
    )
  }
  if (wanted === 'boolean') {
    return (
      <Select
        label={label}
        value={misfit !== undefined ? 'misfit' : value === true ? 'true' : value === false ? 'false' : 'unset'}
        error={misfit === undefined ? undefined : t('kb.notBoolean', { value: misfit })}
        options={[
          { value: 'unset', label: t('kb.unset') },
          { value: 'true', label: t('kb.true') },
          { value: 'false', label: t('kb.false') },
          ...(misfit === undefined ? [] : [{ value: 'misfit' as const, label: `“${misfit}”` }]),
        ]}
        onChange={(choice) => {
          if (choice !== 'misfit') onChange(choice === 'unset' ? undefined : choice === 'true')
        }}
      />
    )
  }
  return <VarText label={label} value={String(value ?? '')} onChange={(text) => onChange(text === '' ? undefined : text)} />
}
