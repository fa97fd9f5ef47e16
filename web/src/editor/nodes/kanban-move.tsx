import * as kanbanMove from '../../../../src/domain/nodes/kanban-move.js'
import type { CardValue } from '../flow-definition'
import { CardValueInput } from '../forms/CardValueInput'
import { Select, TagsInput } from '../forms/fields'
import { useWorkspace } from '../workspace'
import { nodeStrings, type FormProps, type NodeUi } from './node-ui'
import { NODE_TYPE_NAMES } from '../../shared/node-names'

const strings = nodeStrings({
  en: {
    name: NODE_TYPE_NAMES.en.kanbanMove,
    description: 'Creates or moves a kanban card',
    'node.noStage': 'No stage chosen',
    'kb.pipeline': 'Pipeline',
    'kb.choosePipeline': 'Choose a pipeline',
    'kb.stage': 'Stage',
    'kb.chooseStage': 'Choose a stage',
    'kb.values': 'Field values',
    'kb.tags': 'Card tags (comma separated)',
    'kb.noPipelines': 'This workspace has no pipelines yet.',
  },
  pt: {
    name: NODE_TYPE_NAMES.pt.kanbanMove,
    description: 'Cria ou move um cartão do kanban',
    'node.noStage': 'Nenhuma etapa escolhida',
    'kb.pipeline': 'Funil',
    'kb.choosePipeline': 'Escolha um funil',
    'kb.stage': 'Etapa',
    'kb.chooseStage': 'Escolha uma etapa',
    'kb.values': 'Valores dos campos',
    'kb.tags': 'Etiquetas do cartão (separadas por vírgula)',
    'kb.noPipelines': 'Este espaço de trabalho ainda não tem funis.',
  },
})

type Data = kanbanMove.Data

function KanbanMoveSummary({ data }: { data: Partial<Data> }) {
  const t = strings.useT()
  const { pipelines } = useWorkspace()
  const pipeline = pipelines.find((p) => p.id === data.pipelineId)
  const stage = pipeline?.stages.find((s) => s.id === data.stageId)
  return pipeline && stage ? `${pipeline.name} → ${stage.name}` : t('node.noStage')
}

function KanbanMoveForm({ data, onChange }: FormProps<Data>) {
  const t = strings.useT()
  const { pipelines } = useWorkspace()
  if (pipelines.length === 0) return <p className="hint">{t('kb.noPipelines')}</p>
  const pipeline = pipelines.find((p) => p.id === data.pipelineId)
  const values = data.values ?? {}
  const setValue = (fieldId: string, value: CardValue | undefined) => {
    const next = { ...values }
    if (value === undefined) delete next[fieldId]
    else next[fieldId] = value
    const { values: _v, ...rest } = data
    onChange(Object.keys(next).length ? { ...rest, values: next } : (rest as Data))
  }
  return (
    <>
      <Select
        label={t('kb.pipeline')}
        value={data.pipelineId ?? ''}
        placeholder={t('kb.choosePipeline')}
        options={pipelines.map((p) => ({ value: p.id, label: p.name }))}
        onChange={(pipelineId) => {
          const first = [...(pipelines.find((p) => p.id === pipelineId)?.stages ?? [])].sort((a, b) => a.order - b.order)[0]
          const { values: _v, ...rest } = data
          onChange({ ...rest, pipelineId, stageId: first?.id ?? '' })
        }}
      />
      {pipeline && (
        <Select
          label={t('kb.stage')}
          value={data.stageId ?? ''}
          placeholder={t('kb.chooseStage')}
          options={[...pipeline.stages].sort((a, b) => a.order - b.order).map((s) => ({ value: s.id, label: s.name }))}
          onChange={(stageId) => onChange({ ...data, stageId })}
        />
      )}
      {pipeline && pipeline.fields.length > 0 && (
        <fieldset className="group">
          <legend>{t('kb.values')}</legend>
          {[...pipeline.fields]
            .sort((a, b) => a.order - b.order)
            .map((field) => (
              <CardValueInput key={field.id} field={field} value={values[field.id]} onChange={(value) => setValue(field.id, value)} />
            ))}
        </fieldset>
      )}
      <TagsInput
        label={t('kb.tags')}
        value={data.tags}
        onChange={(tags) => {
          const { tags: _t, ...rest } = data
          onChange(tags ? { ...rest, tags } : (rest as Data))
        }}
      />
    </>
  )
}

export const kanbanMoveUi: NodeUi<Data> = {
  icon: '▦',
  strings,
  exits: kanbanMove.exits,
  newData: ({ pipelineId, stageId }) => ({ pipelineId: pipelineId ?? '', stageId: stageId ?? '' }),
  Summary: KanbanMoveSummary,
  Form: KanbanMoveForm,
}
