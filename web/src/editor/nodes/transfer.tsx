import { useState } from 'react'
import { errorText } from '../../shared/api-problems'
import * as transfer from '../../../../src/domain/nodes/transfer.js'
import { Select, TextInput } from '../forms/fields'
import { useWorkspace } from '../workspace'
import { clip, nodeStrings, type FormProps, type NodeUi } from './node-ui'
import { NODE_TYPE_NAMES } from '../../shared/node-names'

const strings = nodeStrings({
  en: {
    name: NODE_TYPE_NAMES.en.transfer,
    description: 'Hands over to a sector or agent',
    'node.noSector': 'No sector chosen',
    'node.sector': 'Sector: {name}',
    'node.agent': 'Agent {id}',
    'tr.targetType': 'Transfer to',
    'tr.sector': 'Sector',
    'tr.agent': 'Agent',
    'tr.chooseSector': 'Choose a sector',
    'tr.newSector': 'New sector',
    'tr.sectorName': 'Name of the new sector',
    'tr.create': 'Create',
    'tr.agentId': 'Agent id (UUID)',
  },
  pt: {
    name: NODE_TYPE_NAMES.pt.transfer,
    description: 'Passa para um setor ou atendente',
    'node.noSector': 'Nenhum setor escolhido',
    'node.sector': 'Setor: {name}',
    'node.agent': 'Atendente {id}',
    'tr.targetType': 'Transferir para',
    'tr.sector': 'Setor',
    'tr.agent': 'Atendente',
    'tr.chooseSector': 'Escolha um setor',
    'tr.newSector': 'Novo setor',
    'tr.sectorName': 'Nome do novo setor',
    'tr.create': 'Criar',
    'tr.agentId': 'Id do atendente (UUID)',
  },
})

type Data = transfer.Data

function TransferSummary({ data }: { data: Partial<Data> }) {
  const t = strings.useT()
  const { sectors } = useWorkspace()
  if (data.targetType === 'agent') return t('node.agent', { id: clip(data.targetId ?? '', 13) })
  const sector = sectors.find((s) => s.id === data.targetId)
  return sector ? t('node.sector', { name: sector.name }) : t('node.noSector')
}

function TransferForm({ data, onChange }: FormProps<Data>) {
  const t = strings.useT()
  const { sectors, createSector } = useWorkspace()
  const [name, setName] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string>()
  return (
    <>
      <Select
        label={t('tr.targetType')}
        value={data.targetType ?? 'sector'}
        options={[
          { value: 'sector', label: t('tr.sector') },
          { value: 'agent', label: t('tr.agent') },
        ]}
        onChange={(targetType) => onChange({ ...data, targetType, targetId: '' })}
      />
      {data.targetType === 'agent' ? (
        <TextInput label={t('tr.agentId')} value={data.targetId ?? ''} onChange={(targetId) => onChange({ ...data, targetId: targetId.trim() })} />
      ) : (
        <>
          <Select label={t('tr.sector')} value={data.targetId ?? ''} placeholder={t('tr.chooseSector')} options={sectors.map((s) => ({ value: s.id, label: s.name }))} onChange={(targetId) => onChange({ ...data, targetId })} />
          <fieldset className="group">
            <legend>{t('tr.newSector')}</legend>
            <div className="row">
              <TextInput label={t('tr.sectorName')} value={name} onChange={setName} />
              <button
                type="button"
                disabled={busy || !name.trim()}
                onClick={async () => {
                  setBusy(true)
                  setError(undefined)
                  try {
                    const id = await createSector(name.trim())
                    setName('')
                    onChange({ ...data, targetType: 'sector', targetId: id })
                  } catch (e) {
                    setError(errorText(e, t))
                  } finally {
                    setBusy(false)
                  }
                }}
              >
                {t('tr.create')}
              </button>
            </div>
            {error && <p className="field-error">{error}</p>}
          </fieldset>
        </>
      )}
    </>
  )
}

export const transferUi: NodeUi<Data> = {
  icon: '⇄',
  strings,
  exits: transfer.exits,
  newData: ({ sectorId }) => ({ targetType: 'sector', targetId: sectorId ?? '' }),
  Summary: TransferSummary,
  Form: TransferForm,
}
