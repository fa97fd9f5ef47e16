import * as question from '../../../../src/domain/nodes/question.js'
import { DurationInput, durationInWords, durationRange, durationWrong, shortDuration } from '../forms/DurationInput'
import { MessageComposer, kindOf, messageOfKind } from '../forms/MessageComposer'
import { ListControls, NumberInput, Select, moveItem, replaceAt } from '../forms/fields'
import { NodeButtons } from './NodeButtons'
import { useWorkspace } from '../workspace'
import { clip, nodeStrings, previewMessage, type FormProps, type NodeUi } from './node-ui'
import { NODE_TYPE_NAMES } from '../../shared/node-names'

const strings = nodeStrings({
  en: {
    name: NODE_TYPE_NAMES.en.question,
    description: 'Asks and waits for a reply',
    'node.savesTo': 'Saves to {name}',
    'q.prompt': 'Prompt',
    'q.input': 'Expected answer',
    'input.text': 'Text',
    'input.number': 'Number',
    'input.email': 'E-mail',
    'input.phone': 'Phone',
    'input.date': 'Date',
    'input.media': 'Media',
    'input.choice': 'Choice (buttons or list)',
    'q.saveAs': 'Save the answer to',
    'q.none': '(do not save)',
    'q.maxRetries': 'Retries before the invalid exit',
    'q.useRetry': 'Custom retry message',
    'q.retryMessage': 'Retry message',
    'q.choiceHint': 'A choice question asks with buttons or a list; each reply id is an exit.',
    'q.dateHint': "Accepts 2026-11-28, 28/11/2026 (day before month), today or tomorrow, in the workspace's time zone; saves 2026-11-28.",
    'q.timeoutSummary': 'Gives up after {duration}{count, plural, =0 {} one { · # reminder} other { · # reminders}}',
    'q.timeoutGroup': 'Reply timeout',
    'q.useTimeout': 'Give up when no reply comes in time',
    'q.timeoutHint': 'Counted from the prompt, or from the retry message after an invalid reply. Then the question leaves by its timeout exit; with nothing connected there, the session ends.',
    'q.reminders': 'Reminders',
    'q.remindersHint': 'At most {max}, sent while the question waits, each counted from the prompt.',
    'q.reminder': 'Reminder {n}',
    'q.reminderAfter': 'Sent after',
    'q.addReminder': 'Add reminder',
    'q.reminderTooSoon': 'At least 1 second after the prompt.',
    'q.reminderAfterTimeout': 'Send it before the question gives up, after {timeout}.',
    'q.reminderNotLater': 'Send it later than the reminder before it.',
  },
  pt: {
    name: NODE_TYPE_NAMES.pt.question,
    description: 'Pergunta e aguarda a resposta',
    'node.savesTo': 'Salva em {name}',
    'q.prompt': 'Pergunta enviada',
    'q.input': 'Resposta esperada',
    'input.text': 'Texto',
    'input.number': 'Número',
    'input.email': 'E-mail',
    'input.phone': 'Telefone',
    'input.date': 'Data',
    'input.media': 'Mídia',
    'input.choice': 'Escolha (botões ou lista)',
    'q.saveAs': 'Salvar a resposta em',
    'q.none': '(não salvar)',
    'q.maxRetries': 'Tentativas antes da saída inválida',
    'q.useRetry': 'Mensagem de nova tentativa própria',
    'q.retryMessage': 'Mensagem de nova tentativa',
    'q.choiceHint': 'Uma pergunta de escolha usa botões ou lista; cada id de resposta é uma saída.',
    'q.dateHint': 'Aceita 2026-11-28, 28/11/2026 (dia antes do mês), hoje ou amanhã, no fuso horário do espaço de trabalho; salva 2026-11-28.',
    'q.timeoutSummary': 'Desiste depois de {duration}{count, plural, =0 {} one { · # lembrete} other { · # lembretes}}',
    'q.timeoutGroup': 'Tempo para responder',
    'q.useTimeout': 'Desistir quando a resposta não vem a tempo',
    'q.timeoutHint': 'Contado a partir da pergunta, ou da mensagem de nova tentativa depois de uma resposta inválida. Então a pergunta sai pela saída de tempo esgotado; sem nada conectado ali, a sessão termina.',
    'q.reminders': 'Lembretes',
    'q.remindersHint': 'No máximo {max}, enviados enquanto a pergunta aguarda, cada um contado a partir da pergunta.',
    'q.reminder': 'Lembrete {n}',
    'q.reminderAfter': 'Enviado depois de',
    'q.addReminder': 'Adicionar lembrete',
    'q.reminderTooSoon': 'No mínimo 1 segundo depois da pergunta.',
    'q.reminderAfterTimeout': 'Envie antes de a pergunta desistir, depois de {timeout}.',
    'q.reminderNotLater': 'Envie depois do lembrete anterior.',
  },
})

type Data = question.Data
type ReplyTimeout = NonNullable<Data['timeout']>
type Reminder = NonNullable<ReplyTimeout['reminders']>[number]

const TIMEOUT_SECONDS = { min: question.REPLY_TIMEOUT.minSeconds, max: question.REPLY_TIMEOUT.maxSeconds }

function QuestionSummary({ data }: { data: Partial<Data> }) {
  const t = strings.useT()
  return (
    <>
      <p className="preview">{clip(previewMessage(data.prompt, t))}</p>
      {data.input?.kind !== 'choice' && <NodeButtons message={data.prompt} />}
      <p className="muted">
        {t(`input.${data.input?.kind ?? 'text'}`)}
        {data.saveAs ? ` · ${t('node.savesTo', { name: data.saveAs })}` : ''}
      </p>
      {data.timeout && <p className="muted">{t('q.timeoutSummary', { duration: shortDuration(data.timeout.seconds), count: data.timeout.reminders?.length ?? 0 })}</p>}
    </>
  )
}

function QuestionForm({ data, onChange, onRenameExit }: FormProps<Data>) {
  const t = strings.useT()
  const { variables } = useWorkspace()
  const choice = data.input?.kind === 'choice'
  const prompt = data.prompt ?? messageOfKind('text')
  return (
    <>
      <Select
        label={t('q.input')}
        value={data.input?.kind ?? 'text'}
        options={question.INPUT_KINDS.map((k) => ({ value: k, label: t(`input.${k}`) }))}
        onChange={(kind) => {
          // A choice needs buttons or a list to choose from.
          const needsChoices = kind === 'choice' && kindOf(prompt) !== 'button' && kindOf(prompt) !== 'list'
          onChange({ ...data, input: { kind }, prompt: needsChoices ? messageOfKind('button', prompt) : prompt })
        }}
      />
      {choice && <p className="hint">{t('q.choiceHint')}</p>}
      {data.input?.kind === 'date' && <p className="hint">{t('q.dateHint')}</p>}
      <fieldset className="group">
        <legend>{t('q.prompt')}</legend>
        <MessageComposer value={prompt} kinds={choice ? ['button', 'list'] : undefined} onChange={(p) => onChange({ ...data, prompt: p })} onRenameId={choice ? onRenameExit : undefined} />
      </fieldset>
      <Select
        label={t('q.saveAs')}
        value={data.saveAs ?? '-'}
        options={[{ value: '-', label: t('q.none') }, ...variables.map((v) => ({ value: v.name, label: `${v.name} (${t(`vtype.${v.type}`)})` }))]}
        onChange={(name) => {
          const { saveAs: _s, ...rest } = data
          onChange(name === '-' ? (rest as Data) : { ...rest, saveAs: name })
        }}
      />
      <NumberInput label={t('q.maxRetries')} min={question.RETRIES.min} max={question.RETRIES.max} value={data.maxRetries} onChange={(maxRetries) => onChange({ ...data, maxRetries })} />
      <label className="check">
        <input
          type="checkbox"
          checked={data.retryMessage !== undefined}
          onChange={(e) => {
            const { retryMessage: _r, ...rest } = data
            onChange(e.target.checked ? { ...rest, retryMessage: messageOfKind('text') } : (rest as Data))
          }}
        />
        {t('q.useRetry')}
      </label>
      {data.retryMessage && (
        <fieldset className="group">
          <legend>{t('q.retryMessage')}</legend>
          <MessageComposer value={data.retryMessage} onChange={(retryMessage) => onChange({ ...data, retryMessage })} />
        </fieldset>
      )}
      <ReplyTimeoutGroup
        timeout={data.timeout}
        onChange={(timeout) => {
          const { timeout: _t, ...rest } = data
          onChange(timeout ? { ...rest, timeout } : (rest as Data))
        }}
      />
    </>
  )
}

/** What is wrong with the reminder at `index`, by the service's rules: before the timeout, each later than the one before. */
function reminderProblem(timeout: ReplyTimeout, index: number, t: ReturnType<typeof strings.useT>): string | undefined {
  const reminders = timeout.reminders ?? []
  const after = reminders[index]!.afterSeconds
  if (after < 1) return t('q.reminderTooSoon')
  if (after >= timeout.seconds) return t('q.reminderAfterTimeout', { timeout: durationInWords(timeout.seconds, t) })
  if (index > 0 && after <= reminders[index - 1]!.afterSeconds) return t('q.reminderNotLater')
  return undefined
}

/** Off, or how long the question waits for a reply and the reminders it sends meanwhile. */
function ReplyTimeoutGroup({ timeout, onChange }: { timeout: ReplyTimeout | undefined; onChange(timeout: ReplyTimeout | undefined): void }) {
  const t = strings.useT()
  const reminders = timeout?.reminders ?? []
  const setReminders = (next: Reminder[]) => {
    if (!timeout) return
    const { reminders: _r, ...rest } = timeout
    onChange(next.length ? { ...rest, reminders: next } : rest)
  }
  // A new reminder goes halfway between the last one (or the prompt) and the timeout.
  const addReminder = () => {
    if (!timeout) return
    const last = reminders.at(-1)?.afterSeconds ?? 0
    setReminders([...reminders, { afterSeconds: Math.max(1, Math.floor((last + timeout.seconds) / 2)), message: messageOfKind('text') }])
  }
  return (
    <fieldset className="group">
      <legend>{t('q.timeoutGroup')}</legend>
      <label className="check">
        <input type="checkbox" checked={timeout !== undefined} onChange={(e) => onChange(e.target.checked ? { seconds: 3600 } : undefined)} />
        {t('q.useTimeout')}
      </label>
      {timeout && (
        <>
          <DurationInput
            label={t('timeout.after')}
            seconds={timeout.seconds}
            error={durationWrong(timeout.seconds, TIMEOUT_SECONDS) ? durationRange(TIMEOUT_SECONDS, t) : undefined}
            onChange={(seconds) => onChange({ ...timeout, seconds })}
          />
          <p className="hint">{t('q.timeoutHint')}</p>
          <fieldset className="group">
            <legend>{t('q.reminders')}</legend>
            <p className="hint">{t('q.remindersHint', { max: question.REPLY_TIMEOUT.maxReminders })}</p>
            {reminders.map((reminder, i) => (
              <div className="item" key={i} role="group" aria-label={t('q.reminder', { n: i + 1 })}>
                <div className="item-head">
                  <span>{t('q.reminder', { n: i + 1 })}</span>
                  <ListControls index={i} count={reminders.length} onMove={(a, b) => setReminders(moveItem(reminders, a, b))} onRemove={() => setReminders(reminders.filter((_, j) => j !== i))} />
                </div>
                <DurationInput
                  label={t('q.reminderAfter')}
                  seconds={reminder.afterSeconds}
                  error={reminderProblem(timeout, i, t)}
                  onChange={(afterSeconds) => setReminders(replaceAt(reminders, i, { ...reminder, afterSeconds }))}
                />
                <MessageComposer value={reminder.message} onChange={(message) => setReminders(replaceAt(reminders, i, { ...reminder, message }))} />
              </div>
            ))}
            <button type="button" className="add" disabled={reminders.length >= question.REPLY_TIMEOUT.maxReminders} onClick={addReminder}>
              + {t('q.addReminder')}
            </button>
          </fieldset>
        </>
      )}
    </fieldset>
  )
}

export const questionUi: NodeUi<Data> = {
  icon: '?',
  strings,
  exits: question.exits,
  newData: () => ({ prompt: { type: 'text', text: { body: '' } }, input: { kind: 'text' }, maxRetries: question.RETRIES.default }),
  Summary: QuestionSummary,
  Form: QuestionForm,
}
