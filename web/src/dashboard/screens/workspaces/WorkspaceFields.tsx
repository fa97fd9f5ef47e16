import { Field } from '../../components/ui'
import { useT } from '../../i18n'

/** The IANA time zones this browser knows, offered as a workspace's time zone. */
const TIME_ZONES: readonly string[] = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : []

/** A workspace's name and time zone, as creating and changing one asks for them. */
export function WorkspaceFields({
  idPrefix,
  name,
  timezone,
  timezoneHint,
  errors,
  onName,
  onTimezone,
}: {
  idPrefix: string
  name: string
  timezone: string
  timezoneHint: string
  errors: Record<string, string>
  onName(name: string): void
  onTimezone(timezone: string): void
}) {
  const t = useT()
  const zones = `${idPrefix}-zones`
  return (
    <div className="form-row">
      <Field label={t('common.name')} error={errors.name}>
        {(props) => <input {...props} value={name} maxLength={200} onChange={(event) => onName(event.target.value)} />}
      </Field>
      <Field label={t('workspaces.timezone')} hint={timezoneHint} error={errors.timezone}>
        {(props) => <input {...props} list={zones} value={timezone} placeholder="America/Sao_Paulo" onChange={(event) => onTimezone(event.target.value)} />}
      </Field>
      <datalist id={zones}>
        {TIME_ZONES.map((zone) => (
          <option key={zone} value={zone} />
        ))}
      </datalist>
    </div>
  )
}
