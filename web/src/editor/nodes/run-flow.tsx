import * as runFlow from '../../../../src/domain/nodes/run-flow.js'
import { NODE_TYPE_NAMES } from '../../shared/node-names'
import { Select } from '../forms/fields'
import { useAnswer, useWorkspace } from '../workspace'
import { nodeStrings, type FormProps, type NodeUi } from './node-ui'

const strings = nodeStrings({
  en: {
    name: NODE_TYPE_NAMES.en.runFlow,
    description: 'Runs another flow of the workspace, then goes on',
    'rf.noFlow': 'No flow chosen',
    'rf.summary': '{name} · {version}',
    'rf.published': 'published',
    'rf.v': 'v{version}',
    'rf.unknownFlow': 'Unknown flow',
    'rf.flow': 'Flow',
    'rf.chooseFlow': 'Choose a flow',
    'rf.flowOption': '{name} (newest v{version})',
    'rf.loading': "Loading the workspace's flows…",
    'rf.refused': 'The flows of the workspace could not be listed.',
    'rf.noFlows': 'This workspace has no other flow yet.',
    'rf.version': 'Version',
    'rf.publishedWhenStarts': 'Published when the session starts',
    'rf.versionN': 'Version {version}',
    'rf.versionHint': 'A session keeps the versions it started with.',
    'rf.hint': 'The flow runs with this session’s variables and comes back by “done” when it ends. A transfer in it ends the whole session.',
    'exit.done': 'done',
  },
  pt: {
    name: NODE_TYPE_NAMES.pt.runFlow,
    description: 'Executa outro fluxo do espaço de trabalho e depois segue',
    'rf.noFlow': 'Nenhum fluxo escolhido',
    'rf.summary': '{name} · {version}',
    'rf.published': 'publicada',
    'rf.v': 'v{version}',
    'rf.unknownFlow': 'Fluxo desconhecido',
    'rf.flow': 'Fluxo',
    'rf.chooseFlow': 'Escolha um fluxo',
    'rf.flowOption': '{name} (mais recente v{version})',
    'rf.loading': 'Carregando os fluxos do espaço de trabalho…',
    'rf.refused': 'Não foi possível listar os fluxos do espaço de trabalho.',
    'rf.noFlows': 'Este espaço de trabalho ainda não tem outro fluxo.',
    'rf.version': 'Versão',
    'rf.publishedWhenStarts': 'A publicada quando a sessão começa',
    'rf.versionN': 'Versão {version}',
    'rf.versionHint': 'Uma sessão mantém as versões com que começou.',
    'rf.hint': 'O fluxo roda com as variáveis desta sessão e volta por “concluído” quando termina. Uma transferência nele encerra a sessão inteira.',
    'exit.done': 'concluído',
  },
})

type Data = runFlow.Data

/** The flows a runFlow node may run, once the workspace has listed them. */
const useCallableFlows = () => useAnswer(useWorkspace().flows)

function RunFlowSummary({ data }: { data: Partial<Data> }) {
  const t = strings.useT()
  const flows = useCallableFlows()
  if (!data.flowId) return <p className="preview">{t('rf.noFlow')}</p>
  const called = Array.isArray(flows) ? flows.find((flow) => flow.id === data.flowId) : undefined
  const name = called?.name ?? (flows === 'loading' ? '…' : t('rf.unknownFlow'))
  const version = typeof data.version === 'number' ? t('rf.v', { version: data.version }) : t('rf.published')
  return <p className="preview">{t('rf.summary', { name, version })}</p>
}

function RunFlowForm({ data, onChange }: FormProps<Data>) {
  const t = strings.useT()
  const flows = useCallableFlows()
  const choices = Array.isArray(flows) ? flows : []
  const newest = choices.find((flow) => flow.id === data.flowId)?.publishedVersion
  const numbered = newest ? Array.from({ length: newest }, (_, i) => i + 1) : typeof data.version === 'number' ? [data.version] : []
  return (
    <>
      <Select
        label={t('rf.flow')}
        value={data.flowId ?? ''}
        placeholder={t('rf.chooseFlow')}
        options={choices.map((flow) => ({ value: flow.id, label: t('rf.flowOption', { name: flow.name, version: flow.publishedVersion }) }))}
        error={flows === 'refused' ? t('rf.refused') : undefined}
        hint={flows === 'loading' ? t('rf.loading') : choices.length === 0 ? t('rf.noFlows') : undefined}
        // A version number is of the flow it was chosen for.
        onChange={(flowId) => onChange({ ...data, flowId, version: 'published' })}
      />
      <Select
        label={t('rf.version')}
        value={String(data.version ?? 'published')}
        options={[{ value: 'published', label: t('rf.publishedWhenStarts') }, ...numbered.map((version) => ({ value: String(version), label: t('rf.versionN', { version }) }))]}
        hint={t('rf.versionHint')}
        onChange={(version) => onChange({ ...data, version: version === 'published' ? 'published' : Number(version) })}
      />
      <p className="hint">{t('rf.hint')}</p>
    </>
  )
}

export const runFlowUi: NodeUi<Data> = {
  icon: '↪',
  strings,
  exits: runFlow.exits,
  newData: () => ({ flowId: '', version: 'published' }),
  Summary: RunFlowSummary,
  Form: RunFlowForm,
  exitLabel: (_data, exit, lang) => (exit.id === runFlow.DONE_HANDLE ? strings.translator(lang)('exit.done') : undefined),
}
