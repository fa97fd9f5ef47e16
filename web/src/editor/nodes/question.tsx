import * as question from '../../../../src/domain/nodes/question.js'
import { MessageComposer, kindOf, messageOfKind } from '../forms/MessageComposer'
import { NumberInput, Select } from '../forms/fields'
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
  },
})

type Data = question.Data

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
    </>
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
