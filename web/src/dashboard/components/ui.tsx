import { useId, useState, type ReactNode } from 'react'
import { Link, useRoute } from 'wouter'
import { sayError, type SaidProblem } from '../../shared/api-problems'
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
 * A labelled form control with its hint and its error (what is wrong with the field, in the
 * person's words: `useFieldErrors`), wired for screen readers: `children` receives the control's
 * id and aria attributes.
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
  hint,
  value,
  onChange,
  options,
  blank,
}: {
  label: string
  hint?: ReactNode
  value: string | number
  onChange(value: string): void
  options: readonly { value: string; label: string | number }[]
  blank?: string
}) {
  return (
    <Field label={label} hint={hint}>
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

/** A failure's problems in the person's words (../../shared/api-problems), each with the field it is about, if any. */
export function useProblems(error: unknown): SaidProblem[] {
  const t = useT()
  return error === undefined || error === null ? [] : sayError(error, t)
}

/** What a failure says about each field (a dotted path: `name`, `stages.0.name`, `values.<field id>`), in the person's words. */
export function useFieldErrors(error: unknown): Record<string, string> {
  const fields: Record<string, string> = {}
  for (const problem of useProblems(error)) if (problem.field !== undefined) fields[problem.field] ??= problem.text
  return fields
}

/** The words about `path`, or else about the first thing under it (`tags.2` for `tags`). */
export const errorAt = (fields: Record<string, string>, path: string): string | undefined =>
  fields[path] ?? Object.entries(fields).find(([field]) => field.startsWith(`${path}.`))?.[1]

/** Whether a form shows `field`: it lists it, or lists `path.*` for a path above it. */
const isShown = (field: string, shown: readonly string[]) => shown.some((path) => field === path || (path.endsWith('.*') && field.startsWith(path.slice(0, -1))))

/** A failure, with a retry when there is something to retry. */
export function ErrorNotice({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  return <ProblemsNotice problems={useProblems(error)} onRetry={onRetry} />
}

function ProblemsNotice({ problems, onRetry }: { problems: SaidProblem[]; onRetry?: () => void }) {
  const t = useT()
  return (
    <div className="notice error" role="alert">
      <span>{t('common.failed', { message: problems.map((problem) => problem.text).join(' ') })}</span>
      {onRetry && (
        <button type="button" className="secondary" onClick={onRetry}>
          {t('common.retry')}
        </button>
      )}
    </div>
  )
}

/**
 * The form-level message of a failed submit: the problems not shown beside a field of the form
 * (`shownOnFields`; `tags.*` for whatever is under `tags`).
 */
export function FormError({ error, shownOnFields = [] }: { error: unknown; shownOnFields?: readonly string[] }) {
  const rest = useProblems(error).filter((problem) => problem.field === undefined || !isShown(problem.field, shownOnFields))
  return rest.length > 0 ? <ProblemsNotice problems={rest} /> : null
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
