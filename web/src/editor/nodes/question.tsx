import * as question from '../../../../src/domain/nodes/question.js'
import { MessageComposer, kindOf, messageOfKind } from '../forms/MessageComposer'
import { NumberInput, Select } from '../forms/fields'
import { useT } from '../i18n'
import { NodeButtons } from '../canvas/NodeButtons'
import { useWorkspace } from '../workspace'
import { clip, previewMessage, type FormProps, type NodeUi } from './node-ui'

type Data = question.Data

function QuestionSummary({ data }: { data: Partial<Data> }) {
  const t = useT()
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
  const t = useT()
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
  exits: question.exits,
  newData: () => ({ prompt: { type: 'text', text: { body: '' } }, input: { kind: 'text' }, maxRetries: question.RETRIES.default }),
  Summary: QuestionSummary,
  Form: QuestionForm,
}
