import * as waitForEvent from '../../../../src/domain/nodes/wait-for-event.js'
import { NODE_TYPE_NAMES } from '../../shared/node-names'
import { DurationInput, durationRange, durationWrong, shortDuration } from '../forms/DurationInput'
import { Select, TextInput } from '../forms/fields'
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
    'wait.event': 'Event name',
    'wait.eventHint': 'As your system posts it to the session, such as “payment.confirmed”.',
    'wait.badEvent': 'Start with a letter or digit; then letters, digits and . _ : - (at most 100).',
    'wait.timeoutGroup': 'Timeout',
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
    'wait.event': 'Nome do evento',
    'wait.eventHint': 'Como o seu sistema o envia para a sessão, por exemplo “payment.confirmed”.',
    'wait.badEvent': 'Comece com letra ou dígito; depois letras, dígitos e . _ : - (no máximo 100).',
    'wait.timeoutGroup': 'Tempo limite',
    'wait.saveAs': 'Salvar os dados do evento em',
    'wait.saveAsHint': 'Só variáveis do tipo objeto.',
    'wait.messagesHint': 'Mensagens que o contato envia enquanto isso são guardadas, sem resposta: o fluxo segue quando o evento chega, ou pela saída de tempo esgotado.',
  },
})

type Data = waitForEvent.Data

const eventWrong = (event: string) => event !== '' && !waitForEvent.EVENT_NAME_PATTERN.test(event)

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
  return (
    <>
      <TextInput label={t('wait.event')} value={data.event ?? ''} hint={t('wait.eventHint')} error={eventWrong(data.event ?? '') ? t('wait.badEvent') : undefined} onChange={(event) => onChange({ ...data, event: event.trim() })} />
      <fieldset className="group">
        <legend>{t('wait.timeoutGroup')}</legend>
        <DurationInput
          label={t('timeout.after')}
          seconds={data.timeoutSeconds}
          error={durationWrong(data.timeoutSeconds, waitForEvent.WAIT_SECONDS) ? durationRange(waitForEvent.WAIT_SECONDS, t) : undefined}
          onChange={(timeoutSeconds) => onChange({ ...data, timeoutSeconds })}
        />
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
