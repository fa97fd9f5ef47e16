import { useState, type ReactNode } from 'react'
import { useT } from '../i18n'
import { PAGE_SIZES } from './address'
import { SelectField } from './ui'

type Values<Name extends string> = Record<Name, string>

/** The values of a list's filters in the address (empty when not there). */
export const filtersOf = <Name extends string>(params: URLSearchParams, names: readonly Name[]): Values<Name> =>
  Object.fromEntries(names.map((name) => [name, params.get(name) ?? ''])) as Values<Name>

/**
 * A list's filters as a search form: `children` draws the fields of a draft, which Apply hands to
 * `onApply` with its text trimmed (unless `check` finds a field wrong, then shown on that field)
 * and Clear hands over empty.
 */
export function FilterForm<Name extends string>({
  filters,
  onApply,
  check,
  className,
  children,
}: {
  filters: Values<Name>
  onApply(filters: Values<Name>): void
  /** What is wrong with the draft, by field; nothing is applied while anything is. */
  check?(draft: Values<Name>): Partial<Values<Name>>
  className?: string
  children(draft: Values<Name>, change: (name: Name) => (value: string) => void, errors: Partial<Values<Name>>): ReactNode
}) {
  const t = useT()
  const [draft, setDraft] = useState(filters)
  const [errors, setErrors] = useState<Partial<Values<Name>>>({})
  const change = (name: Name) => (value: string) => setDraft({ ...draft, [name]: value })
  const names = Object.keys(filters) as Name[]

  function apply() {
    const trimmed = Object.fromEntries(names.map((name) => [name, draft[name].trim()])) as Values<Name>
    const wrong = check?.(trimmed) ?? {}
    setErrors(wrong)
    if (Object.keys(wrong).length === 0) onApply(trimmed)
  }

  return (
    <form
      className={className ? `filters ${className}` : 'filters'}
      role="search"
      aria-label={t('common.filters')}
      onSubmit={(event) => {
        event.preventDefault()
        apply()
      }}
    >
      {children(draft, change, errors)}
      <div className="filter-actions">
        <button type="submit">{t('common.apply')}</button>
        <button type="button" className="secondary" onClick={() => onApply(filtersOf(new URLSearchParams(), names))}>
          {t('common.clear')}
        </button>
      </div>
    </form>
  )
}

/** How many items a page holds, among the sizes the API allows. */
export function PageSizeField({ value, onChange }: { value: string; onChange(value: string): void }) {
  const t = useT()
  return <SelectField label={t('pager.size')} value={value || PAGE_SIZES[0]} onChange={onChange} options={PAGE_SIZES.map((size) => ({ value: String(size), label: size }))} />
}
