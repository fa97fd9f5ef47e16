import { useId, useRef, useState, type ReactNode } from 'react'
import { useT } from '../i18n'
import { SYSTEM_VARIABLES } from '../flow-definition'
import { useWorkspace } from '../workspace'

const length = (text: string) => [...text].length

export function Field({ label, hint, children, error }: { label: string; hint?: string; error?: string; children: ReactNode }) {
  return (
    <div className="field">
      <label className="field-control">
        <span className="field-label">{label}</span>
        {children}
      </label>
      {hint && <span className="field-hint">{hint}</span>}
      {error && <span className="field-error">{error}</span>}
    </div>
  )
}

export function TextInput({ label, value, onChange, max, placeholder, hint }: { label: string; value: string; onChange(value: string): void; max?: number; placeholder?: string; hint?: string }) {
  return (
    <Field label={label} hint={hint} error={max !== undefined && length(value) > max ? `${length(value)}/${max}` : undefined}>
      <input type="text" value={value} placeholder={placeholder} onChange={(e) => onChange(e.target.value)} />
    </Field>
  )
}

export function NumberInput({
  label,
  value,
  onChange,
  min,
  max,
  step,
  error,
}: {
  label: string
  value: number | undefined
  onChange(value: number | undefined): void
  min?: number
  max?: number
  /** "any" for decimals; whole numbers when absent. */
  step?: 'any'
  error?: string
}) {
  return (
    <Field label={label} error={error}>
      <input
        type="number"
        value={value ?? ''}
        min={min}
        max={max}
        step={step}
        onChange={(e) => onChange(e.target.value === '' ? undefined : Number(e.target.value))}
      />
    </Field>
  )
}

export function Select<T extends string>({
  label,
  value,
  options,
  onChange,
  placeholder,
  error,
}: {
  label: string
  value: T | ''
  options: { value: T; label: string }[]
  onChange(value: T): void
  placeholder?: string
  error?: string
}) {
  return (
    <Field label={label} error={error}>
      <select value={value} onChange={(e) => onChange(e.target.value as T)}>
        {(placeholder !== undefined || value === '') && (
          <option value="" disabled>
            {placeholder ?? ''}
          </option>
        )}
        {value !== '' && !options.some((o) => o.value === value) && <option value={value}>{value}</option>}
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </Field>
  )
}

/** Tags typed as "a, b, c"; an empty list is absent. */
export function TagsInput({ label, value, onChange }: { label: string; value: string[] | undefined; onChange(value: string[] | undefined): void }) {
  const [text, setText] = useState((value ?? []).join(', '))
  const parse = (raw: string) => raw.split(',').map((tag) => tag.trim()).filter(Boolean)
  // Typing keeps its own spacing; a change from elsewhere (undo, another node) shows the tags.
  const shown = parse(text).join('\u0000') === (value ?? []).join('\u0000') ? text : (value ?? []).join(', ')
  return (
    <Field label={label}>
      <input
        type="text"
        value={shown}
        onChange={(e) => {
          setText(e.target.value)
          const tags = parse(e.target.value)
          onChange(tags.length ? tags : undefined)
        }}
      />
    </Field>
  )
}

/** A text field that offers the workspace's and the system's variables for `{{…}}` insertion. */
export function VarText({ label, value, onChange, max, multiline, placeholder }: { label: string; value: string; onChange(value: string): void; max?: number; multiline?: boolean; placeholder?: string }) {
  const t = useT()
  const { variables } = useWorkspace()
  const [open, setOpen] = useState(false)
  const ref = useRef<HTMLInputElement & HTMLTextAreaElement>(null)
  const menuId = useId()

  const insert = (name: string) => {
    const element = ref.current
    const start = element?.selectionStart ?? value.length
    const end = element?.selectionEnd ?? value.length
    const token = `{{${name}}}`
    onChange(value.slice(0, start) + token + value.slice(end))
    setOpen(false)
    requestAnimationFrame(() => {
      element?.focus()
      element?.setSelectionRange(start + token.length, start + token.length)
    })
  }

  const over = max !== undefined && length(value) > max
  return (
    <div className="field var-text">
      {max !== undefined && <span className={over ? 'count over' : 'count'}>{`${length(value)}/${max}`}</span>}
      <label className="field-control">
        <span className="field-label">{label}</span>
        {multiline ? (
          <textarea ref={ref} rows={3} value={value} placeholder={placeholder} onChange={(e) => onChange(e.target.value)} />
        ) : (
          <input ref={ref} type="text" value={value} placeholder={placeholder} onChange={(e) => onChange(e.target.value)} />
        )}
      </label>
      <button type="button" className="var-button" title={t('vars.insert')} aria-label={`{x} ${t('vars.insert')}`} aria-expanded={open} aria-controls={menuId} onClick={() => setOpen(!open)}>
        {'{x}'}
      </button>
      {open && (
        <div className="var-menu" id={menuId} role="menu">
          <div className="var-menu-heading">{t('vars.workspace')}</div>
          {variables.length === 0 && <div className="var-menu-empty">{t('vars.none')}</div>}
          {variables.map((v) => (
            <button type="button" role="menuitem" key={v.id} onClick={() => insert(v.name)}>
              {v.name} <small>{t(`vtype.${v.type}`)}</small>
            </button>
          ))}
          <div className="var-menu-heading">{t('vars.system')}</div>
          {SYSTEM_VARIABLES.map((name) => (
            <button type="button" role="menuitem" key={name} onClick={() => insert(name)}>
              {name}
            </button>
          ))}
        </div>
      )}
    </div>
  )
}

/** Names a flow may read: the workspace's variables and the system's. */
export function useReadableVariables(): string[] {
  const { variables } = useWorkspace()
  return [...variables.map((v) => v.name), ...SYSTEM_VARIABLES]
}

export function ListControls({ index, count, onMove, onRemove, canRemove = true }: { index: number; count: number; onMove(from: number, to: number): void; onRemove(): void; canRemove?: boolean }) {
  const t = useT()
  return (
    <span className="list-controls">
      <button type="button" className="icon" title={t('msg.up')} aria-label={t('msg.up')} disabled={index === 0} onClick={() => onMove(index, index - 1)}>
        ↑
      </button>
      <button type="button" className="icon" title={t('msg.down')} aria-label={t('msg.down')} disabled={index === count - 1} onClick={() => onMove(index, index + 1)}>
        ↓
      </button>
      <button type="button" className="icon danger" title={t('msg.remove')} aria-label={t('msg.remove')} disabled={!canRemove} onClick={onRemove}>
        ×
      </button>
    </span>
  )
}

export const moveItem = <T,>(list: T[], from: number, to: number): T[] => {
  const next = [...list]
  const [item] = next.splice(from, 1)
  if (item !== undefined) next.splice(to, 0, item)
  return next
}

export const replaceAt = <T,>(list: T[], index: number, item: T): T[] => list.map((x, i) => (i === index ? item : x))
