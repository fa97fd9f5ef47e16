import * as split from '../../../../src/domain/nodes/split.js'
import { NODE_TYPE_NAMES } from '../../shared/node-names'
import { ListControls, NumberInput, TextInput, moveItem, replaceAt } from '../forms/fields'
import { nodeStrings, type FormProps, type NodeUi } from './node-ui'

const strings = nodeStrings({
  en: {
    name: NODE_TYPE_NAMES.en.split,
    description: 'Sends each contact down a branch drawn at random, by weight (A/B test)',
    'split.branches': 'Branches',
    'split.hint': 'Each visit draws one branch, with the chance of its weight over the sum of the weights. The draw is recorded: a replay of the session takes the same branch.',
    'split.addBranch': 'Add branch',
    'split.exitId': 'Exit id',
    'split.weight': 'Weight',
    'split.share': '{percent}% of visits',
    'split.badWeight': 'A whole number from 1 to 100.',
    'split.count': 'From 2 to 5 branches.',
  },
  pt: {
    name: NODE_TYPE_NAMES.pt.split,
    description: 'Envia cada contato por um ramo sorteado, conforme o peso (teste A/B)',
    'split.branches': 'Ramos',
    'split.hint': 'Cada visita sorteia um ramo, com a chance do seu peso sobre a soma dos pesos. O sorteio fica registrado: reproduzir a sessão segue o mesmo ramo.',
    'split.addBranch': 'Adicionar ramo',
    'split.exitId': 'Id da saída',
    'split.weight': 'Peso',
    'split.share': '{percent}% das visitas',
    'split.badWeight': 'Um número inteiro de 1 a 100.',
    'split.count': 'De 2 a 5 ramos.',
  },
})

type Data = split.Data
type Branch = split.Branch

const weightWrong = (weight: number) => !Number.isInteger(weight) || weight < split.WEIGHT.min || weight > split.WEIGHT.max

/** Each branch's share of the visits in whole percent, or none while a weight is not valid. */
const sharesOf = (branches: readonly Branch[]): Map<string, number> | undefined => {
  if (branches.some((branch) => weightWrong(branch.weight))) return undefined
  const total = branches.reduce((sum, branch) => sum + branch.weight, 0)
  return new Map(branches.map((branch) => [branch.id, Math.round((branch.weight * 100) / total)]))
}

const nextBranchId = (branches: readonly Branch[]) => {
  for (let n = 0; ; n++) {
    const id = n < 26 ? String.fromCharCode(97 + n) : `branch_${n}`
    if (!branches.some((branch) => branch.id === id)) return id
  }
}

function SplitForm({ data, onChange, onRenameExit }: FormProps<Data>) {
  const t = strings.useT()
  const branches = data.branches ?? []
  const shares = sharesOf(branches)
  const set = (next: Branch[]) => onChange({ ...data, branches: next })
  return (
    <fieldset className="group">
      <legend>{t('split.branches')}</legend>
      <p className="hint">{t('split.hint')}</p>
      {branches.map((branch, i) => {
        const setBranch = (next: Branch) => set(replaceAt(branches, i, next))
        const share = shares?.get(branch.id)
        return (
          <div className="item" key={i}>
            <div className="item-head">
              <span>#{i + 1}</span>
              <ListControls
                index={i}
                count={branches.length}
                canRemove={branches.length > split.BRANCHES.min}
                onMove={(a, b) => set(moveItem(branches, a, b))}
                onRemove={() => set(branches.filter((_, j) => j !== i))}
              />
            </div>
            <TextInput
              label={t('split.exitId')}
              value={branch.id}
              onChange={(id) => {
                onRenameExit(branch.id, id)
                setBranch({ ...branch, id })
              }}
            />
            <NumberInput
              label={t('split.weight')}
              value={branch.weight}
              min={split.WEIGHT.min}
              max={split.WEIGHT.max}
              error={weightWrong(branch.weight) ? t('split.badWeight') : undefined}
              hint={share === undefined ? undefined : t('split.share', { percent: share })}
              onChange={(weight) => setBranch({ ...branch, weight: weight ?? 0 })}
            />
          </div>
        )
      })}
      <button type="button" className="add" disabled={branches.length >= split.BRANCHES.max} onClick={() => set([...branches, { id: nextBranchId(branches), weight: 50 }])}>
        + {t('split.addBranch')}
      </button>
      <p className="hint">{t('split.count')}</p>
    </fieldset>
  )
}

export const splitUi: NodeUi<Data> = {
  icon: '⋔',
  strings,
  exits: split.exits,
  newData: () => ({
    branches: [
      { id: 'a', weight: 50 },
      { id: 'b', weight: 50 },
    ],
  }),
  Summary: () => null,
  Form: SplitForm,
  exitLabel: (data, exit) => {
    const share = exit.id === null ? undefined : sharesOf(data.branches ?? [])?.get(exit.id)
    return share === undefined ? undefined : `${exit.id} · ${share}%`
  },
}
