import * as condition from '../../../../src/domain/nodes/condition.js'
import { ListControls, NumberInput, Select, TextInput, moveItem, replaceAt, useReadableVariables } from '../forms/fields'
import { nodeStrings, type FormProps, type NodeUi } from './node-ui'
import { NODE_TYPE_NAMES } from '../../shared/node-names'

const strings = nodeStrings({
  en: {
    name: NODE_TYPE_NAMES.en.condition,
    description: 'Branches on variables',
    'cond.rules': 'Rules',
    'cond.hint': 'Checked in order: the first match leaves by its exit, otherwise by the default exit.',
    'cond.addRule': 'Add rule',
    'cond.exitId': 'Exit id',
    'cond.variable': 'Variable',
    'cond.operator': 'Operator',
    'cond.value': 'Value',
    'op.equals': 'equals',
    'op.not_equals': 'does not equal',
    'op.contains': 'contains',
    'op.starts_with': 'starts with',
    'op.gt': 'greater than',
    'op.gte': 'at least',
    'op.lt': 'less than',
    'op.lte': 'at most',
    'op.exists': 'is set',
    'op.regex': 'matches regex',
  },
  pt: {
    name: NODE_TYPE_NAMES.pt.condition,
    description: 'Ramifica conforme variáveis',
    'cond.rules': 'Regras',
    'cond.hint': 'Verificadas em ordem: a primeira que casar sai pela sua saída; senão, pela saída padrão.',
    'cond.addRule': 'Adicionar regra',
    'cond.exitId': 'Id da saída',
    'cond.variable': 'Variável',
    'cond.operator': 'Operador',
    'cond.value': 'Valor',
    'op.equals': 'é igual a',
    'op.not_equals': 'é diferente de',
    'op.contains': 'contém',
    'op.starts_with': 'começa com',
    'op.gt': 'maior que',
    'op.gte': 'pelo menos',
    'op.lt': 'menor que',
    'op.lte': 'no máximo',
    'op.exists': 'está preenchida',
    'op.regex': 'casa com a regex',
  },
})

type Data = condition.Data

const nextRuleId = (rules: condition.Rule[]) => {
  for (let n = rules.length + 1; ; n++) if (!rules.some((r) => r.id === `rule_${n}`)) return `rule_${n}`
}

function ConditionForm({ data, onChange, onRenameExit }: FormProps<Data>) {
  const t = strings.useT()
  const readable = useReadableVariables()
  const rules = data.rules ?? []
  const set = (next: condition.Rule[]) => onChange({ ...data, rules: next })
  return (
    <fieldset className="group">
      <legend>{t('cond.rules')}</legend>
      <p className="hint">{t('cond.hint')}</p>
      {rules.map((rule, i) => {
        const setRule = (next: condition.Rule) => set(replaceAt(rules, i, next))
        const numeric = condition.NUMERIC_OPERATORS.includes(rule.operator)
        return (
          <div className="item" key={i}>
            <div className="item-head">
              <span>#{i + 1}</span>
              <ListControls index={i} count={rules.length} canRemove={rules.length > 1} onMove={(a, b) => set(moveItem(rules, a, b))} onRemove={() => set(rules.filter((_, j) => j !== i))} />
            </div>
            <TextInput
              label={t('cond.exitId')}
              value={rule.id}
              onChange={(id) => {
                onRenameExit(rule.id, id)
                setRule({ ...rule, id })
              }}
            />
            <Select label={t('cond.variable')} value={rule.variable} placeholder={t('vars.choose')} options={readable.map((name) => ({ value: name, label: name }))} onChange={(variable) => setRule({ ...rule, variable })} />
            <Select
              label={t('cond.operator')}
              value={rule.operator}
              options={condition.OPERATORS.map((op) => ({ value: op, label: t(`op.${op}`) }))}
              onChange={(operator) => {
                const { value: _v, ...rest } = rule
                if (operator === 'exists') setRule({ ...rest, operator })
                else if (condition.NUMERIC_OPERATORS.includes(operator)) setRule({ ...rest, operator, value: Number(rule.value) || 0 })
                else setRule({ ...rest, operator, value: rule.value === undefined ? '' : String(rule.value) })
              }}
            />
            {rule.operator !== 'exists' &&
              (numeric ? (
                <NumberInput label={t('cond.value')} value={typeof rule.value === 'number' ? rule.value : Number(rule.value) || 0} onChange={(value) => setRule({ ...rule, value: value ?? 0 })} />
              ) : (
                <TextInput label={t('cond.value')} value={String(rule.value ?? '')} onChange={(value) => setRule({ ...rule, value })} />
              ))}
          </div>
        )
      })}
      <button type="button" className="add" onClick={() => set([...rules, { id: nextRuleId(rules), variable: 'lastMessage', operator: 'equals', value: '' }])}>
        + {t('cond.addRule')}
      </button>
    </fieldset>
  )
}

export const conditionUi: NodeUi<Data> = {
  icon: '◇',
  strings,
  exits: condition.exits,
  newData: () => ({ rules: [{ id: 'rule_1', variable: 'lastMessage', operator: 'equals', value: '' }] }),
  Summary: () => null,
  Form: ConditionForm,
  exitLabel: (data, exit, lang) => {
    if (exit.kind) return undefined
    const t = strings.translator(lang)
    const rule = data.rules?.find((r) => r.id === exit.id)
    return rule && `${rule.id}: ${rule.variable} ${t(`op.${rule.operator}`)}${rule.operator === 'exists' ? '' : ` ${String(rule.value ?? '')}`}`
  },
}
