import { useId, useState } from 'react'
import { useT, type Translate } from '../i18n'
import { Field, Select } from './fields'

type Unit = 'seconds' | 'minutes' | 'hours' | 'days'

const UNITS: readonly Unit[] = ['seconds', 'minutes', 'hours', 'days']
const SECONDS: Record<Unit, number> = { seconds: 1, minutes: 60, hours: 3600, days: 86_400 }
const SHORT: Record<Unit, string> = { seconds: 's', minutes: 'min', hours: 'h', days: 'd' }

/** The largest unit that tells `seconds` whole. */
const unitOf = (seconds: number): Unit => [...UNITS].reverse().find((unit) => seconds % SECONDS[unit] === 0) ?? 'seconds'

/** "2 h", "90 min", "7 d": a duration as the canvas shows it. */
export const shortDuration = (seconds: number): string => {
  const unit = unitOf(seconds)
  return `${seconds / SECONDS[unit]} ${SHORT[unit]}`
}

/** "5 seconds", "7 days": a duration in words of the editor's language. */
export const durationInWords = (seconds: number, t: Translate): string => {
  const unit = unitOf(seconds)
  return t(`duration.${unit}`, { count: seconds / SECONDS[unit] })
}

/** Whether `seconds` is a whole number of seconds within `range`. */
export const durationWrong = (seconds: number | undefined, range: { min: number; max: number }): boolean =>
  seconds === undefined || !Number.isInteger(seconds) || seconds < range.min || seconds > range.max

/** "Between 5 seconds and 7 days, in whole seconds.": what a duration of `range` must be. */
export const durationRange = (range: { min: number; max: number }, t: Translate): string =>
  t('duration.between', { min: durationInWords(range.min, t), max: durationInWords(range.max, t) })

/**
 * A duration in seconds, typed as a number and a unit. The number and its unit are each kept as
 * typed and chosen (90 minutes stays 90 minutes; 8 then days is 8 days); a change from elsewhere
 * (undo, another node, a reminder moved) shows the stored duration.
 */
export function DurationInput({ label, seconds, onChange, error }: { label: string; seconds: number | undefined; onChange(seconds: number): void; error?: string }) {
  const t = useT()
  const errorId = useId()
  const [typed, setTyped] = useState(() => {
    const unit = unitOf(seconds ?? 3600)
    return { amount: seconds === undefined ? '' : String(seconds / SECONDS[unit]), unit, seconds }
  })
  const unit = typed.unit
  const shownAmount = typed.seconds === seconds ? typed.amount : seconds === undefined ? '' : String(seconds / SECONDS[unit])
  const set = (amount: string, nextUnit: Unit) => {
    const total = Math.round(Number(amount) * SECONDS[nextUnit])
    const valid = amount.trim() !== '' && Number.isFinite(total)
    setTyped({ amount, unit: nextUnit, seconds: valid ? total : seconds })
    if (valid) onChange(total)
  }
  return (
    <div className="duration">
      <div className="row">
        <Field label={label}>
          <input
            type="number"
            min={0}
            step="any"
            value={shownAmount}
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? errorId : undefined}
            onChange={(e) => set(e.target.value, unit)}
          />
        </Field>
        <Select<Unit> label={t('duration.unit')} value={unit} options={UNITS.map((u) => ({ value: u, label: t(`unit.${u}`) }))} onChange={(next) => set(shownAmount, next)} />
      </div>
      {error && (
        <p className="field-error" id={errorId}>
          {error}
        </p>
      )}
    </div>
  )
}
