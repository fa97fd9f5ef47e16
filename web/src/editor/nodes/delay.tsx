import * as delay from '../../../../src/domain/nodes/delay.js'
import { NODE_TYPE_NAMES } from '../../shared/node-names'
import { DurationInput, durationRange, durationWrong, shortDuration } from '../forms/DurationInput'
import { nodeStrings, type FormProps, type NodeUi } from './node-ui'

const strings = nodeStrings({
  en: {
    name: NODE_TYPE_NAMES.en.delay,
    description: 'Pauses the flow for a while, then goes on',
    'delay.summary': 'waits {duration}',
    'delay.for': 'Pauses for',
    'delay.hint': 'Messages the contact sends meanwhile are held (at most 20) and answered after the pause, in the order they came.',
  },
  pt: {
    name: NODE_TYPE_NAMES.pt.delay,
    description: 'Pausa o fluxo por um tempo e depois segue',
    'delay.summary': 'aguarda {duration}',
    'delay.for': 'Pausa por',
    'delay.hint': 'Mensagens que o contato envia enquanto isso ficam guardadas (no máximo 20) e são respondidas depois da pausa, na ordem em que chegaram.',
  },
})

type Data = delay.Data

function DelaySummary({ data }: { data: Partial<Data> }) {
  const t = strings.useT()
  return <p className="preview">{t('delay.summary', { duration: typeof data.seconds === 'number' ? shortDuration(data.seconds) : '?' })}</p>
}

function DelayForm({ data, onChange }: FormProps<Data>) {
  const t = strings.useT()
  return (
    <>
      <DurationInput
        label={t('delay.for')}
        seconds={data.seconds}
        error={durationWrong(data.seconds, delay.DELAY_SECONDS) ? durationRange(delay.DELAY_SECONDS, t) : undefined}
        onChange={(seconds) => onChange({ ...data, seconds })}
      />
      <p className="hint">{t('delay.hint')}</p>
    </>
  )
}

export const delayUi: NodeUi<Data> = {
  icon: '◔',
  strings,
  exits: delay.exits,
  newData: () => ({ seconds: 60 }),
  Summary: DelaySummary,
  Form: DelayForm,
}
