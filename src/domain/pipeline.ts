import { Type, type Static } from '@sinclair/typebox'
import { BadRequestError, ConflictError, NotFoundError } from '../errors.js'
import type { Decider } from './decider.js'
import { Timestamp, Uuid } from './schemas.js'
import { FIELD_TYPES, FIELD_VALUE_TYPES, type FieldType } from './field-types.js'
import { sameJson } from './json.js'

export const pipelineStream = (pipelineId: string) => `pipeline-${pipelineId}`

export { FIELD_TYPES, FIELD_VALUE_TYPES, type FieldType }

/** Field types whose values are numbers: the card list sums them in `aggregations`. */
export const NUMERIC_FIELD_TYPES: readonly FieldType[] = FIELD_TYPES.filter((type) => FIELD_VALUE_TYPES[type] === 'number')

const FieldTypeSchema = Type.Union(FIELD_TYPES.map((type) => Type.Literal(type)))
export const HexColor = Type.String({ pattern: '^#[0-9A-Fa-f]{6}$', description: '#RRGGBB' })
export const CurrencyCode = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code, e.g. BRL' })
export const PipelineName = Type.String({ minLength: 1, maxLength: 200 })
export const SelectOptions = Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 100, uniqueItems: true })
export const MAX_STAGES = 50
export const MAX_FIELDS = 100
export const DEFAULT_STAGE_COLOR = '#9E9E9E'

export const Stage = Type.Object({ id: Uuid, pipelineId: Uuid, name: PipelineName, order: Type.Integer({ minimum: 0 }), color: HexColor })
export type Stage = Static<typeof Stage>

export const Field = Type.Object({
  id: Uuid,
  name: PipelineName,
  type: FieldTypeSchema,
  required: Type.Boolean(),
  isFeatured: Type.Boolean(),
  order: Type.Integer({ minimum: 0 }),
  /** The choices of a `select` field; null for every other type. */
  options: Type.Union([SelectOptions, Type.Null()]),
  /** The currency of a `currency` field; null for every other type. */
  currency: Type.Union([CurrencyCode, Type.Null()]),
})
export type Field = Static<typeof Field>

const Stages = Type.Array(Stage, { minItems: 1, maxItems: MAX_STAGES })
const Fields = Type.Array(Field, { maxItems: MAX_FIELDS })

const PipelineCreated = Type.Object({ pipelineId: Uuid, workspaceId: Uuid, name: PipelineName, stages: Stages, fields: Fields, createdAt: Timestamp })

/** The whole definition after the change, and what it dropped (the cards read model forgets values of dropped fields). */
const PipelineUpdated = Type.Object({
  pipelineId: Uuid,
  workspaceId: Uuid,
  name: PipelineName,
  stages: Stages,
  fields: Fields,
  removedStageIds: Type.Array(Uuid),
  removedFieldIds: Type.Array(Uuid),
  updatedAt: Timestamp,
})

export type PipelineEvent =
  | { type: 'PipelineCreated'; data: Static<typeof PipelineCreated> }
  | { type: 'PipelineUpdated'; data: Static<typeof PipelineUpdated> }

/**
 * A stage or field as a request describes it. `id` is either one the pipeline already has
 * (`isNew: false`, to keep or change it) or a fresh one for a new item; `order` defaults to the
 * item's position in the list.
 */
export interface StageInput {
  id: string
  isNew: boolean
  name: string
  order?: number
  color?: string
}

export interface FieldInput {
  id: string
  isNew: boolean
  name: string
  type: FieldType
  required?: boolean
  isFeatured?: boolean
  order?: number
  options?: string[] | null
  currency?: string | null
}

/** `workspaceId` is the caller's: a pipeline of another workspace is answered as not found. */
export type PipelineCommand =
  | { type: 'CreatePipeline'; data: { pipelineId: string; workspaceId: string; name: string; stages: StageInput[]; fields: FieldInput[]; now: string } }
  | {
      type: 'UpdatePipeline'
      data: {
        pipelineId: string
        workspaceId: string
        name?: string
        stages?: StageInput[]
        fields?: FieldInput[]
        /** Ids of the pipeline's stages that hold at least one card, as the cards read model knows them. */
        stagesHoldingCards: readonly string[]
        now: string
      }
    }

export interface ActivePipeline {
  status: 'active'
  id: string
  workspaceId: string
  name: string
  stages: Stage[]
  fields: Field[]
  createdAt: string
  updatedAt: string
}

export type Pipeline = { status: 'none' } | ActivePipeline

/** The pipeline if the caller's workspace holds it; anything else is not found, so existence never leaks. */
export function reachablePipeline(state: Pipeline, pipelineId: string, workspaceId: string): ActivePipeline {
  if (state.status !== 'active' || state.workspaceId !== workspaceId) throw new NotFoundError(`pipeline ${pipelineId} not found`)
  return state
}

const byOrder = <T extends { order: number }>(items: T[]): T[] => items.map((item, index) => ({ item, index })).sort((a, b) => a.item.order - b.item.order || a.index - b.index).map(({ item }) => item)

function checkIds(items: { id: string; isNew: boolean }[], existing: { id: string }[], what: 'stages' | 'fields'): void {
  const seen = new Set<string>()
  items.forEach(({ id, isNew }, index) => {
    if (seen.has(id)) throw new BadRequestError(`${what}/${index}/id: ${id} is listed twice`)
    seen.add(id)
    if (!isNew && !existing.some((item) => item.id === id)) throw new BadRequestError(`${what}/${index}/id: ${id} is not one of this pipeline's ${what}`)
  })
}

function toStages(pipelineId: string, inputs: StageInput[], existing: Stage[]): Stage[] {
  checkIds(inputs, existing, 'stages')
  return byOrder(inputs.map((s, index) => ({ id: s.id, pipelineId, name: s.name, order: s.order ?? index, color: s.color ?? DEFAULT_STAGE_COLOR })))
}

function toFields(inputs: FieldInput[], existing: Field[]): Field[] {
  checkIds(inputs, existing, 'fields')
  return byOrder(
    inputs.map((f, index) => {
      const at = `fields/${index}`
      const before = existing.find((e) => e.id === f.id)
      if (before && before.type !== f.type) {
        throw new ConflictError(`${at}/type: field "${before.name}" is a ${before.type} field and cannot become ${f.type}; add a new field instead`)
      }
      const options = f.options ?? null
      const currency = f.currency ?? null
      if (f.type === 'select' && options === null) throw new BadRequestError(`${at}/options: a select field needs its options`)
      if (f.type !== 'select' && options !== null) throw new BadRequestError(`${at}/options: only select fields have options`)
      if (f.type === 'currency' && currency === null) throw new BadRequestError(`${at}/currency: a currency field needs a currency code`)
      if (f.type !== 'currency' && currency !== null) throw new BadRequestError(`${at}/currency: only currency fields have a currency`)
      return { id: f.id, name: f.name, type: f.type, required: f.required ?? false, isFeatured: f.isFeatured ?? false, order: f.order ?? index, options, currency }
    }),
  )
}


export const pipeline: Decider<PipelineCommand, Pipeline, PipelineEvent> = {
  initialState: { status: 'none' },
  eventSchemas: { PipelineCreated, PipelineUpdated },

  decide(command, state) {
    switch (command.type) {
      case 'CreatePipeline': {
        const { pipelineId, workspaceId, name, now } = command.data
        if (state.status !== 'none') throw new ConflictError(`pipeline ${pipelineId} already exists`)
        const stages = toStages(pipelineId, command.data.stages, [])
        const fields = toFields(command.data.fields, [])
        return [{ type: 'PipelineCreated', data: { pipelineId, workspaceId, name, stages, fields, createdAt: now } }]
      }
      case 'UpdatePipeline': {
        const { pipelineId, workspaceId, now } = command.data
        const current = reachablePipeline(state, pipelineId, workspaceId)
        const name = command.data.name ?? current.name
        const stages = command.data.stages ? toStages(pipelineId, command.data.stages, current.stages) : current.stages
        const fields = command.data.fields ? toFields(command.data.fields, current.fields) : current.fields
        const removedStages = current.stages.filter((s) => !stages.some((kept) => kept.id === s.id))
        const occupied = removedStages.filter((s) => command.data.stagesHoldingCards.includes(s.id))
        if (occupied.length > 0) {
          const names = occupied.map((s) => `"${s.name}" (${s.id})`).join(', ')
          throw new ConflictError(`cannot remove stage ${names}: it still holds cards; move or delete them first`)
        }
        if (name === current.name && sameJson(stages, current.stages) && sameJson(fields, current.fields)) return []
        const removedFieldIds = current.fields.filter((f) => !fields.some((kept) => kept.id === f.id)).map((f) => f.id)
        return [
          {
            type: 'PipelineUpdated',
            data: { pipelineId, workspaceId, name, stages, fields, removedStageIds: removedStages.map((s) => s.id), removedFieldIds, updatedAt: now },
          },
        ]
      }
      default: {
        const exhaustive: never = command
        throw new Error(`unknown command ${String(exhaustive)}`)
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'PipelineCreated': {
        const { pipelineId, workspaceId, name, stages, fields, createdAt } = event.data
        return { status: 'active', id: pipelineId, workspaceId, name, stages, fields, createdAt, updatedAt: createdAt }
      }
      case 'PipelineUpdated': {
        if (state.status === 'none') return state
        const { name, stages, fields, updatedAt } = event.data
        return { ...state, name, stages, fields, updatedAt }
      }
      default: {
        const exhaustive: never = event
        return exhaustive
      }
    }
  },
}
