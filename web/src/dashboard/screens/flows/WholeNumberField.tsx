import { Field } from '../../components/ui'

/** A whole number from 1 to `most` as typed in a field, or undefined for anything else (empty included). */
export const wholeNumberOf = (typed: string, most: number): number | undefined => {
  const value = Number(typed.trim())
  return typed.trim() !== '' && Number.isInteger(value) && value >= 1 && value <= most ? value : undefined
}

/** A field for a whole number from 1 to `most` (a percent, a count), kept as typed so a person can clear it. */
export function WholeNumberField({ label, hint, value, onChange, most, error }: { label: string; hint: string; value: string; onChange(value: string): void; most: number; error?: string }) {
  return (
    <Field label={label} hint={hint} error={error}>
      {(props) => <input {...props} className="whole-number" type="number" inputMode="numeric" min={1} max={most} step={1} value={value} onChange={(event) => onChange(event.target.value)} />}
    </Field>
  )
}
