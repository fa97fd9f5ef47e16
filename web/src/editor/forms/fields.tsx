import { useId, useRef, useState, type ReactNode } from 'react'
import { SECRET_NAME_PATTERN } from '../../../../src/domain/secret-rules.js'
import { useT } from '../i18n'
import { SYSTEM_VARIABLES } from '../flow-definition'
import { useAnswer, useWorkspace } from '../workspace'

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

export function TextInput({
  label,
  value,
  onChange,
  max,
  placeholder,
  hint,
  error,
}: {
  label: string
  value: string
  onChange(value: string): void
  max?: number
  placeholder?: string
  hint?: string
  /** What is wrong with the value, shown under it. */
  error?: string
}) {
  const shown = error ?? (max !== undefined && length(value) > max ? `${length(value)}/${max}` : undefined)
  return (
    <Field label={label} hint={hint} error={shown}>
      <input type="text" value={value} placeholder={placeholder} aria-invalid={shown ? true : undefined} onChange={(e) => onChange(e.target.value)} />
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
  hint,
}: {
  label: string
  value: number | undefined
  onChange(value: number | undefined): void
  min?: number
  max?: number
  /** "any" for decimals; whole numbers when absent. */
  step?: 'any'
  error?: string
  hint?: string
}) {
  return (
    <Field label={label} error={error} hint={error ? undefined : hint}>
      <input
        type="number"
        aria-invalid={error ? true : undefined}
        value={value ?? ''}
        min={min}
        max={max}
        step={step}
        onChange={(e) => onChange(e.target.value === '' ? undefined : Number(e.target.value))}
      />
    </Field>
  )
}

/**
 * A whole number from `min` to `max`, or empty for its default; `rangeText` says so under the
 * field, as its error when the number is out of range. The bounds are numbers, not a limits object
 * of src/domain: an object handed to a component may be changed for all the bundler knows, and the
 * schemas built from it would then stay in the editor's bundle, with TypeBox.
 */
export function WholeInRange({ label, min, max, value, rangeText, onChange }: { label: string; min: number; max: number; value: number | undefined; rangeText: string; onChange(value: number | undefined): void }) {
  const wrong = value !== undefined && (!Number.isInteger(value) || value < min || value > max)
  return <NumberInput label={label} min={min} max={max} value={value} error={wrong ? rangeText : undefined} hint={rangeText} onChange={onChange} />
}

export function Select<T extends string>({
  label,
  value,
  options,
  onChange,
  placeholder,
  error,
  hint,
}: {
  label: string
  value: T | ''
  options: { value: T; label: string }[]
  onChange(value: T): void
  placeholder?: string
  error?: string
  hint?: string
}) {
  return (
    <Field label={label} error={error} hint={hint}>
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

/**
 * A text field that offers the workspace's and the system's variables for `{{…}}` insertion, and
 * with `secrets` the workspace's secrets as `{{secrets.NAME}}` (an HTTP request's URL, headers, body).
 */
export function VarText({
  label,
  value,
  onChange,
  max,
  multiline,
  placeholder,
  secrets,
  rows = 3,
  code,
  hint,
  error,
}: {
  label: string
  value: string
  onChange(value: string): void
  max?: number
  multiline?: boolean
  placeholder?: string
  secrets?: boolean
  rows?: number
  /** Monospaced, for JSON. */
  code?: boolean
  hint?: string
  error?: string
}) {
  const t = useT()
  const { variables } = useWorkspace()
  const [open, setOpen] = useState<'variables' | 'secrets'>()
  const ref = useRef<HTMLInputElement & HTMLTextAreaElement>(null)
  const secretsButton = useRef<HTMLButtonElement>(null)
  const menuId = useId()
  const secretsId = useId()
  const hintId = useId()

  const insert = (name: string) => {
    const element = ref.current
    const start = element?.selectionStart ?? value.length
    const end = element?.selectionEnd ?? value.length
    const token = `{{${name}}}`
    onChange(value.slice(0, start) + token + value.slice(end))
    setOpen(undefined)
    requestAnimationFrame(() => {
      element?.focus()
      element?.setSelectionRange(start + token.length, start + token.length)
    })
  }

  const over = max !== undefined && length(value) > max
  const described = hint || error ? hintId : undefined
  const control = {
    ref,
    value,
    placeholder,
    className: code ? 'code' : undefined,
    'aria-describedby': described,
    'aria-invalid': error ? true : undefined,
    onChange: (e: { target: { value: string } }) => onChange(e.target.value),
  }
  return (
    <div className={`field var-text${secrets ? ' with-secrets' : ''}`}>
      {max !== undefined && <span className={over ? 'count over' : 'count'}>{`${length(value)}/${max}`}</span>}
      <label className="field-control">
        <span className="field-label">{label}</span>
        {multiline ? <textarea rows={rows} spellCheck={code ? false : undefined} {...control} /> : <input type="text" {...control} />}
      </label>
      <span className="var-buttons">
        {secrets && (
          <button
            ref={secretsButton}
            type="button"
            className="var-button"
            title={t('secrets.insert')}
            aria-label={`${t('secrets.button')} ${t('secrets.insert')}`}
            aria-expanded={open === 'secrets'}
            aria-controls={secretsId}
            onClick={() => setOpen(open === 'secrets' ? undefined : 'secrets')}
          >
            {t('secrets.button')}
          </button>
        )}
        <button
          type="button"
          className="var-button"
          title={t('vars.insert')}
          aria-label={`{x} ${t('vars.insert')}`}
          aria-expanded={open === 'variables'}
          aria-controls={menuId}
          onClick={() => setOpen(open === 'variables' ? undefined : 'variables')}
        >
          {'{x}'}
        </button>
      </span>
      {open === 'variables' && (
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
      {open === 'secrets' && (
        <SecretMenu
          id={secretsId}
          onInsert={(name) => insert(`secrets.${name}`)}
          onClose={() => {
            setOpen(undefined)
            secretsButton.current?.focus()
          }}
        />
      )}
      {(hint || error) && (
        <span id={hintId} className={error ? 'field-error' : 'field-hint'}>
          {error ?? hint}
        </span>
      )}
    </div>
  )
}

/**
 * The workspace's secrets to insert, by name (never a value). Where the service does not list them
 * to the editor, or the one wanted is new, its name is typed.
 */
function SecretMenu({ id, onInsert, onClose }: { id: string; onInsert(name: string): void; onClose(): void }) {
  const t = useT()
  const { secretNames } = useWorkspace()
  const names = useAnswer(secretNames)
  const [typed, setTyped] = useState('')
  const typedId = useId()
  const valid = SECRET_NAME_PATTERN.test(typed)
  const insertTyped = () => valid && onInsert(typed)
  return (
    <div className="var-menu secret-menu" id={id} role="group" aria-label={t('secrets.title')} onKeyDown={(e) => e.key === 'Escape' && onClose()}>
      <div className="var-menu-heading">{t('secrets.title')}</div>
      {names === 'loading' && <div className="var-menu-empty">{t('secrets.loading')}</div>}
      {names === 'refused' && <div className="var-menu-empty">{t('secrets.notListed')}</div>}
      {Array.isArray(names) && names.length === 0 && <div className="var-menu-empty">{t('secrets.none')}</div>}
      {Array.isArray(names) &&
        names.map((name) => (
          <button type="button" key={name} onClick={() => onInsert(name)}>
            {name}
          </button>
        ))}
      <div className="secret-typed">
        <label htmlFor={typedId} className="var-menu-heading">
          {t('secrets.name')}
        </label>
        <div className="row">
          <input
            id={typedId}
            type="text"
            value={typed}
            aria-invalid={typed !== '' && !valid ? true : undefined}
            onChange={(e) => setTyped(e.target.value.trim())}
            onKeyDown={(e) => {
              if (e.key === 'Enter') {
                e.preventDefault()
                insertTyped()
              }
            }}
          />
          <button type="button" className="secondary" disabled={!valid} onClick={insertTyped}>
            {t('secrets.insertTyped')}
          </button>
        </div>
        {typed !== '' && !valid && <span className="field-error">{t('secrets.badName')}</span>}
      </div>
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
