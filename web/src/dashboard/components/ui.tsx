import { useId, useState, type ReactNode } from 'react'
import { Link, useRoute } from 'wouter'
import { ApiError } from '../api'
import { useT } from '../i18n'

export { DateTime } from '../../shared/date-time'

/** The title row of a screen: its heading, and actions on the right. */
export function PageHeader({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="page-header">
      <h1>{title}</h1>
      {children && <div className="page-actions">{children}</div>}
    </div>
  )
}

interface ControlProps {
  id: string
  'aria-invalid': boolean | undefined
  'aria-describedby': string | undefined
}

/**
 * A labelled form control with its hint and its error (the API's message about this field), wired
 * for screen readers: `children` receives the control's id and aria attributes.
 */
export function Field({ label, hint, error, children }: { label: string; hint?: ReactNode; error?: string; children: (props: ControlProps) => ReactNode }) {
  const id = useId()
  const hintId = hint ? `${id}-hint` : undefined
  const errorId = error ? `${id}-error` : undefined
  const describedBy = [hintId, errorId].filter(Boolean).join(' ') || undefined
  return (
    <div className={error ? 'field invalid' : 'field'}>
      <label htmlFor={id}>{label}</label>
      {children({ id, 'aria-invalid': error ? true : undefined, 'aria-describedby': describedBy })}
      {hint && (
        <p className="hint" id={hintId}>
          {hint}
        </p>
      )}
      {error && (
        <p className="field-error" id={errorId} role="alert">
          {error}
        </p>
      )}
    </div>
  )
}

/** A labelled select of `options`; `blank` first, with an empty value, when the choice may be none. */
export function SelectField({
  label,
  value,
  onChange,
  options,
  blank,
}: {
  label: string
  value: string | number
  onChange(value: string): void
  options: readonly { value: string; label: string | number }[]
  blank?: string
}) {
  return (
    <Field label={label}>
      {(props) => (
        <select {...props} value={String(value)} onChange={(event) => onChange(event.target.value)}>
          {blank !== undefined && <option value="">{blank}</option>}
          {options.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </select>
      )}
    </Field>
  )
}

/** A failure, with a retry when there is something to retry. */
export function ErrorNotice({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  const t = useT()
  const message = error instanceof Error ? error.message : String(error)
  return (
    <div className="notice error" role="alert">
      <span>{t('common.failed', { message })}</span>
      {onRetry && (
        <button type="button" className="secondary" onClick={onRetry}>
          {t('common.retry')}
        </button>
      )}
    </div>
  )
}

/** The form-level message of a failed submit: what the API said that names no field. */
export function FormError({ error, shownOnFields }: { error: unknown; shownOnFields?: readonly string[] }) {
  if (!error) return null
  if (error instanceof ApiError && shownOnFields && Object.keys(error.fields).some((field) => shownOnFields.includes(field))) return null
  return <ErrorNotice error={error} />
}

export function Loading() {
  const t = useT()
  return (
    <p className="loading" role="status">
      {t('common.loading')}
    </p>
  )
}

export function Empty({ children }: { children?: ReactNode }) {
  const t = useT()
  return <p className="empty">{children ?? t('common.empty')}</p>
}

/** Copies `value` to the clipboard and says so for a moment. */
export function CopyButton({ value, label }: { value: string; label?: string }) {
  const t = useT()
  const [copied, setCopied] = useState(false)
  return (
    <button
      type="button"
      className="secondary copy"
      aria-label={label ? `${t('common.copy')}: ${label}` : t('common.copy')}
      onClick={() => {
        void navigator.clipboard?.writeText(value).then(() => {
          setCopied(true)
          setTimeout(() => setCopied(false), 1500)
        })
      }}
    >
      {copied ? t('common.copied') : t('common.copy')}
    </button>
  )
}

/** A secret shown once (a key, a client secret): readable, selectable, with a copy button. */
export function SecretValue({ label, value, testId }: { label: string; value: string; testId?: string }) {
  const id = useId()
  return (
    <div className="secret">
      <label htmlFor={id}>{label}</label>
      <div className="secret-row">
        <input id={id} readOnly value={value} data-testid={testId} onFocus={(event) => event.currentTarget.select()} />
        <CopyButton value={value} label={label} />
      </div>
    </div>
  )
}

/** The spec's paging: previous and next, where we are, and how many in all. */
export function Pager({ page, totalPages, totalElements, onPage }: { page: number; totalPages: number; totalElements: number; onPage(page: number): void }) {
  const t = useT()
  if (totalElements === 0) return null
  return (
    <nav className="pager" aria-label={t('pager.label')}>
      <button type="button" className="secondary" disabled={page <= 0} onClick={() => onPage(page - 1)}>
        {t('pager.previous')}
      </button>
      <span>{t('pager.status', { page: page + 1, pages: Math.max(totalPages, 1), total: totalElements })}</span>
      <button type="button" className="secondary" disabled={page + 1 >= totalPages} onClick={() => onPage(page + 1)}>
        {t('pager.next')}
      </button>
    </nav>
  )
}

/** Tabs that are addresses (each tab a link, the current one marked), so a tab can be linked to and reloaded. */
export function LinkTabs({ label, tabs }: { label: string; tabs: { href: string; label: string }[] }) {
  return (
    <nav className="tabs" aria-label={label}>
      {tabs.map((tab) => (
        <TabLink key={tab.href} {...tab} />
      ))}
    </nav>
  )
}

function TabLink({ href, label }: { href: string; label: string }) {
  const [active] = useRoute(href)
  return (
    <Link href={href} className={active ? 'tab active' : 'tab'} aria-current={active ? 'page' : undefined}>
      {label}
    </Link>
  )
}
