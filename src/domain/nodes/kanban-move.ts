import { Type, type Static } from '@sinclair/typebox'
import { Tags as CardTags, valueMisfit, type CardValue } from '../card.js'
import { FIELD_VALUE_TYPES, type Field } from '../pipeline.js'
import { AnyKey } from '../schemas.js'
import { hasPlaceholder } from '../interpolate.js'
import { UNNAMED_EXIT, type CheckContext, type NodeOf, type Step, type Visit } from './node-type.js'

/** Creates the session's card in a stage, or moves it there when it is already in that pipeline. */
export const schema = Type.Object({
  pipelineId: Type.String({ format: 'uuid' }),
  stageId: Type.String({ format: 'uuid' }),
  /** Key: a field id of the pipeline; a string may hold `{{…}}`. */
  values: Type.Optional(Type.Record(AnyKey, Type.Union([Type.String(), Type.Number(), Type.Boolean()]))),
  /** Added to the card's tags: the card's own rules, so every tag a flow adds can be stored. */
  tags: Type.Optional(CardTags),
})
export type Data = Static<typeof schema>

export const exits = () => UNNAMED_EXIT

export const check = ({ pipelineId, stageId, values = {} }: Data, { catalog, report }: CheckContext): void => {
  const pipeline = catalog.pipelines.get(pipelineId)
  if (!pipeline) return report(['pipelineId'], `no pipeline "${pipelineId}" in this workspace`)
  if (!pipeline.stageIds.has(stageId)) report(['stageId'], `pipeline "${pipelineId}" has no stage "${stageId}"`)
  for (const [fieldId, value] of Object.entries(values)) {
    const target = pipeline.fields.find((f) => f.id === fieldId)
    const problem = target ? cardValueProblem(target, value) : `pipeline "${pipelineId}" has no field "${fieldId}"`
    if (problem) report(['values', fieldId], problem)
  }
}

/**
 * What the card would refuse of a value a kanbanMove sets. A value with placeholders is known only
 * at run time, but it is text: a field that takes no text always refuses it.
 */
function cardValueProblem(field: Field, value: CardValue): string | undefined {
  if (typeof value !== 'string' || !hasPlaceholder(value)) return valueMisfit(field, value)
  if (FIELD_VALUE_TYPES[field.type] === 'string') return undefined
  return `${valueMisfit(field, value)}; a value with {{…}} is text`
}

export const run = ({ data }: NodeOf<typeof schema>, visit: Visit): Step => {
  const { pipelineId, stageId } = data
  const card = visit.card
  const moving = card !== null && card.pipelineId === pipelineId
  const cardId = moving ? card.cardId : visit.newId()
  const values = visit.interpolating((text) =>
    Object.fromEntries(Object.entries(data.values ?? {}).map(([field, value]) => [field, typeof value === 'string' ? text(value) : value])),
  )
  visit.moveCard({ action: moving ? 'move' : 'create', cardId, pipelineId, stageId, previousStageId: moving ? card.stageId : null, values, tags: [...(data.tags ?? [])] })
  return { exit: null }
}
