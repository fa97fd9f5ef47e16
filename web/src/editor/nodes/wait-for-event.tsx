import { useState } from 'react'
import * as waitForEvent from '../../../../src/domain/nodes/wait-for-event.js'
import { NODE_TYPE_NAMES } from '../../shared/node-names'
import { Field, Select, TextInput } from '../forms/fields'
import { useWorkspace } from '../workspace'
import { nodeStrings, type FormProps, type NodeUi } from './node-ui'

const strings = nodeStrings({
  en: {
    name: NODE_TYPE_NAMES.en.waitForEvent,
    description: 'Waits for an outside event',
    'wait.noEvent': 'No event named yet',
    'wait.summary': 'waits for {event} · {duration}',
    'wait.savesTo': 'Saves its data to {name}',
    'exit.received': 'received',
    'exit.timeout': 'timeout',
    'wait.event': 'Event name',
    'wait.eventHint': 'As your system posts it to the session, such as “payment.confirmed”.',
    'wait.badEvent': 'Start with a letter or digit; then letters, digits and . _ : - (at most 100).',
    'wait.timeoutGroup': 'Timeout',
    'wait.timeout': 'Gives up after',
    'wait.unit': 'Unit',
    'unit.seconds': 'seconds',
    'unit.minutes': 'minutes',
    'unit.hours': 'hours',
    'unit.days': 'days',
    'wait.badTimeout': 'Between 5 seconds and 7 days, in whole seconds.',
    'wait.saveAs': "Save the event's data to",
    'wait.saveAsHint': 'Object variables only.',
    'wait.messagesHint': 'Messages the contact sends meanwhile are kept, not answered: the flow goes on when the event comes, or by the timeout exit.',
  },
  pt: {
    name: NODE_TYPE_NAMES.pt.waitForEvent,
    description: 'Aguarda um evento externo',
    'wait.noEvent': 'Nenhum evento definido ainda',
    'wait.summary': 'aguarda {event} · {duration}',
    'wait.savesTo': 'Salva os dados em {name}',
    'exit.received': 'recebido',
    'exit.timeout': 'tempo esgotado',
    'wait.event': 'Nome do evento',
    'wait.eventHint': 'Como o seu sistema o envia para a sessão, por exemplo “payment.confirmed”.',
    'wait.badEvent': 'Comece com letra ou dígito; depois letras, dígitos e . _ : - (no máximo 100).',
    'wait.timeoutGroup': 'Tempo limite',
    'wait.timeout': 'Desiste depois de',
    'wait.unit': 'Unidade',
    'unit.seconds': 'segundos',
    'unit.minutes': 'minutos',
    'unit.hours': 'horas',
    'unit.days': 'dias',
    'wait.badTimeout': 'Entre 5 segundos e 7 dias, em segundos inteiros.',
    'wait.saveAs': 'Salvar os dados do evento em',
    'wait.saveAsHint': 'Só variáveis do tipo objeto.',
    'wait.messagesHint': 'Mensagens que o contato envia enquanto isso são guardadas, sem resposta: o fluxo segue quando o evento chega, ou pela saída de tempo esgotado.',
  },
})

type Data = waitForEvent.Data
type Unit = 'seconds' | 'minutes' | 'hours' | 'days'

const UNITS: readonly Unit[] = ['seconds', 'minutes', 'hours', 'days']
const SECONDS: Record<Unit, number> = { seconds: 1, minutes: 60, hours: 3600, days: 86_400 }
const SHORT: Record<Unit, string> = { seconds: 's', minutes: 'min', hours: 'h', days: 'd' }

/** The largest unit that tells `seconds` whole. */
const unitOf = (seconds: number): Unit => [...UNITS].reverse().find((unit) => seconds % SECONDS[unit] === 0) ?? 'seconds'

/** "2 h", "90 min", "7 d": the wait as the canvas shows it. */
export const shortDuration = (seconds: number): string => {
  const unit = unitOf(seconds)
  return `${seconds / SECONDS[unit]} ${SHORT[unit]}`
}

const eventWrong = (event: string) => event !== '' && !waitForEvent.EVENT_NAME_PATTERN.test(event)
const timeoutWrong = (seconds: number | undefined) =>
  seconds === undefined || !Number.isInteger(seconds) || seconds < waitForEvent.WAIT_SECONDS.min || seconds > waitForEvent.WAIT_SECONDS.max

function WaitForEventSummary({ data }: { data: Partial<Data> }) {
  const t = strings.useT()
  return (
    <>
      <p className="preview">{data.event ? t('wait.summary', { event: data.event, duration: typeof data.timeoutSeconds === 'number' ? shortDuration(data.timeoutSeconds) : '?' }) : t('wait.noEvent')}</p>
      {data.saveAs && <p className="muted">{t('wait.savesTo', { name: data.saveAs })}</p>}
    </>
  )
}

function WaitForEventForm({ data, onChange }: FormProps<Data>) {
  const t = strings.useT()
  const { variables } = useWorkspace()
  const seconds = data.timeoutSeconds
  // The number and its unit are each kept as typed and chosen (90 minutes stays 90 minutes; 8 then
  // days is 8 days); a change from elsewhere (undo, another node) shows the stored wait.
  const [typed, setTyped] = useState(() => {
    const unit = unitOf(seconds ?? 3600)
    return { amount: seconds === undefined ? '' : String(seconds / SECONDS[unit]), unit, seconds }
  })
  const unit = typed.unit
  const shownAmount = typed.seconds === seconds ? typed.amount : seconds === undefined ? '' : String(seconds / SECONDS[unit])
  const setWait = (amount: string, nextUnit: Unit) => {
    const total = Math.round(Number(amount) * SECONDS[nextUnit])
    const valid = amount.trim() !== '' && Number.isFinite(total)
    setTyped({ amount, unit: nextUnit, seconds: valid ? total : seconds })
    if (valid) onChange({ ...data, timeoutSeconds: total })
  }
  return (
    <>
      <TextInput label={t('wait.event')} value={data.event ?? ''} hint={t('wait.eventHint')} error={eventWrong(data.event ?? '') ? t('wait.badEvent') : undefined} onChange={(event) => onChange({ ...data, event: event.trim() })} />
      <fieldset className="group">
        <legend>{t('wait.timeoutGroup')}</legend>
        <div className="row">
          <Field label={t('wait.timeout')}>
            <input type="number" min={0} step="any" value={shownAmount} aria-invalid={timeoutWrong(seconds) ? true : undefined} onChange={(e) => setWait(e.target.value, unit)} />
          </Field>
          <Select<Unit>
            label={t('wait.unit')}
            value={unit}
            options={UNITS.map((u) => ({ value: u, label: t(`unit.${u}`) }))}
            onChange={(next) => setWait(shownAmount, next)}
          />
        </div>
        {timeoutWrong(seconds) && <p className="field-error">{t('wait.badTimeout')}</p>}
      </fieldset>
      <Select
        label={t('wait.saveAs')}
        value={data.saveAs ?? '-'}
        hint={t('wait.saveAsHint')}
        options={[{ value: '-', label: t('vars.dontSave') }, ...variables.filter((v) => v.type === 'object').map((v) => ({ value: v.name, label: v.name }))]}
        onChange={(name) => {
          const { saveAs: _s, ...rest } = data
          onChange(name === '-' ? rest : { ...rest, saveAs: name })
        }}
      />
      <p className="hint">{t('wait.messagesHint')}</p>
    </>
  )
}

export const waitForEventUi: NodeUi<Data> = {
  icon: '◷',
  strings,
  exits: waitForEvent.exits,
  newData: () => ({ event: '', timeoutSeconds: 3600 }),
  Summary: WaitForEventSummary,
  Form: WaitForEventForm,
  exitLabel: (_data, exit, lang) => {
    const t = strings.translator(lang)
    if (exit.id === waitForEvent.RECEIVED_HANDLE) return t('exit.received')
    if (exit.id === waitForEvent.TIMEOUT_HANDLE) return t('exit.timeout')
    return undefined
  },
}
