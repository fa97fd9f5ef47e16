import { Type, type Static } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { BadRequestError, ConflictError, NotFoundError } from '../errors.js'
import type { Decider } from './decider.js'
import { FIELD_VALUE_TYPES, reachablePipeline, type Field, type Pipeline } from './pipeline.js'
import { AnyKey, Timestamp, Uuid } from './schemas.js'

export const CARD_STREAM_PREFIX = 'card-'
export const cardStream = (cardId: string) => `${CARD_STREAM_PREFIX}${cardId}`

export const CardValue = Type.Union([Type.String(), Type.Number(), Type.Boolean()])
export type CardValue = Static<typeof CardValue>
/** Key: a field id of the card's pipeline. */
export const CardValues = Type.Record(AnyKey, CardValue)
export type CardValues = Static<typeof CardValues>

/** No commas (the list filter separates tags by commas) and no surrounding blanks. */
export const Tag = Type.String({ minLength: 1, maxLength: 100, pattern: '^[^,\\s](?:[^,]*[^,\\s])?$' })
export const MAX_TAGS = 50
export const Tags = Type.Array(Tag, { maxItems: MAX_TAGS, uniqueItems: true })
export const MAX_TEXT_LENGTH = 10_000

const SessionId = Type.Union([Uuid, Type.Null()])

/** Every card event names its pipeline, stage, linked session and tags: webhooks are built from them alone. */
const CardCreated = Type.Object({
  cardId: Uuid,
  pipelineId: Uuid,
  workspaceId: Uuid,
  stageId: Uuid,
  sessionId: SessionId,
  values: CardValues,
  tags: Tags,
  createdAt: Timestamp,
})

/** `values` and `tags` as they are after the change; `changedFieldIds` names the values set or cleared. */
const CardUpdated = Type.Object({
  cardId: Uuid,
  pipelineId: Uuid,
  stageId: Uuid,
  sessionId: SessionId,
  changedFieldIds: Type.Array(Uuid),
  tagsChanged: Type.Boolean(),
  values: CardValues,
  tags: Tags,
  updatedAt: Timestamp,
})

const CardStageChanged = Type.Object({
  cardId: Uuid,
  pipelineId: Uuid,
  stageId: Uuid,
  previousStageId: Uuid,
  sessionId: SessionId,
  tags: Tags,
  movedAt: Timestamp,
})

const CardDeleted = Type.Object({ cardId: Uuid, pipelineId: Uuid, stageId: Uuid, sessionId: SessionId, tags: Tags, deletedAt: Timestamp })

export type CardEvent =
  | { type: 'CardCreated'; data: Static<typeof CardCreated> }
  | { type: 'CardUpdated'; data: Static<typeof CardUpdated> }
  | { type: 'CardStageChanged'; data: Static<typeof CardStageChanged> }
  | { type: 'CardDeleted'; data: Static<typeof CardDeleted> }

/** A value of `null` clears the field. */
export type ValuesPatch = Record<string, unknown>

/**
 * `workspaceId` is the caller's; `pipeline` is the card's pipeline as its stream tells it (for a
 * new card, the one named in the request). Cards and pipelines of other workspaces are not found.
 */
export type CardCommand =
  | {
      type: 'CreateCard'
      data: {
        cardId: string
        workspaceId: string
        pipelineId: string
        pipeline: Pipeline
        stageId: string
        sessionId: string | null
        values: ValuesPatch
        tags: string[]
        now: string
      }
    }
  | {
      type: 'UpdateCard'
      data: { cardId: string; workspaceId: string; pipeline: Pipeline; stageId?: string; values?: ValuesPatch; tags?: string[]; now: string }
    }
  | { type: 'DeleteCard'; data: { cardId: string; workspaceId: string; now: string } }

export interface ActiveCard {
  status: 'active'
  id: string
  pipelineId: string
  workspaceId: string
  stageId: string
  sessionId: string | null
  tags: string[]
  values: CardValues
  createdAt: string
  movedAt: string
}

export type Card = { status: 'none' | 'deleted' } | ActiveCard

function reachableCard(state: Card, cardId: string, workspaceId: string): ActiveCard {
  if (state.status !== 'active' || state.workspaceId !== workspaceId) throw new NotFoundError(`card ${cardId} not found`)
  return state
}

const isDate = (value: string): boolean => {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value)
  if (!match) return false
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  const date = new Date(Date.UTC(year, month - 1, day))
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
}
const isEmail = (value: string) => value.length <= 254 && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value)
const isPhone = (value: string) => /^\+?[0-9 ().-]+$/.test(value) && /^[0-9]{7,15}$/.test(value.replace(/[^0-9]/g, ''))

/** What a field accepts, in words, and whether a value of its JSON type (`FIELD_VALUE_TYPES`) fits. */
function ruleOf(field: Field): { takes: string; fits(value: CardValue): boolean } {
  switch (field.type) {
    case 'number':
    case 'currency':
      return { takes: 'a number', fits: (value) => Number.isFinite(value) }
    case 'boolean':
      return { takes: 'true or false', fits: () => true }
    case 'text':
      return { takes: `a non-empty string of at most ${MAX_TEXT_LENGTH} characters`, fits: (value) => String(value).length >= 1 && String(value).length <= MAX_TEXT_LENGTH }
    case 'date':
      return { takes: 'a date as YYYY-MM-DD', fits: (value) => isDate(String(value)) }
    case 'email':
      return { takes: 'an email address', fits: (value) => isEmail(String(value)) }
    case 'phone':
      return { takes: 'a phone number of 7 to 15 digits, optionally with +, spaces, dots, dashes and parentheses', fits: (value) => isPhone(String(value)) }
    case 'select':
      return { takes: `one of: ${field.options?.join(', ')}`, fits: (value) => field.options?.includes(String(value)) ?? false }
    default: {
      const exhaustive: never = field.type
      return exhaustive
    }
  }
}

/** Why `value` cannot be `field`'s (`field "Amount" (currency) takes a number`); undefined when it can. */
export function valueMisfit(field: Field, value: unknown): string | undefined {
  const rule = ruleOf(field)
  // The JSON type is checked first, so `fits` only sees values of the field's type.
  if (typeof value === FIELD_VALUE_TYPES[field.type] && rule.fits(value as CardValue)) return undefined
  return `field "${field.name}" (${field.type}) takes ${rule.takes}`
}

const isTag = TypeCompiler.Compile(Tag)

/**
 * The card's `tags` with `added` after them, within `Tags`: a tag already there is not repeated,
 * and a tag `Tag` refuses, or one past MAX_TAGS, is left out and answered in `dropped`. The card's
 * own tags always stay.
 */
export function addTags(tags: readonly string[], added: readonly string[]): { tags: string[]; dropped: string[] } {
  const next = [...tags]
  const dropped: string[] = []
  for (const tag of added) {
    if (next.includes(tag) || dropped.includes(tag)) continue
    if (next.length < MAX_TAGS && isTag.Check(tag)) next.push(tag)
    else dropped.push(tag)
  }
  return { tags: next, dropped }
}

/**
 * Applies `patch` to `values` after checking every key against the pipeline's fields; values of
 * fields the pipeline no longer has are dropped. A required field cannot be cleared, and with
 * `complete` (a new card) every required field must hold a value: a field made required later
 * does not block other changes to older cards.
 */
export function applyValues(fields: readonly Field[], values: CardValues, patch: ValuesPatch, options: { complete: boolean }): CardValues {
  const next: CardValues = {}
  for (const field of fields) if (values[field.id] !== undefined) next[field.id] = values[field.id]!
  for (const [id, value] of Object.entries(patch)) {
    const field = fields.find((f) => f.id === id)
    if (!field) throw new BadRequestError(`values/${id}: the pipeline has no field with this id`)
    if (value === null) {
      if (field.required) throw new BadRequestError(`values/${id}: field "${field.name}" is required and cannot be cleared`)
      delete next[id]
      continue
    }
    const misfit = valueMisfit(field, value)
    if (misfit) throw new BadRequestError(`values/${id}: ${misfit}`)
    next[id] = value as CardValue
  }
  if (options.complete) {
    const missing = fields.find((field) => field.required && next[field.id] === undefined)
    if (missing) throw new BadRequestError(`values/${missing.id}: field "${missing.name}" is required`)
  }
  return next
}

function checkStage(pipeline: { id: string; stages: { id: string }[] }, stageId: string): void {
  if (!pipeline.stages.some((s) => s.id === stageId)) throw new BadRequestError(`stageId: ${stageId} is not a stage of pipeline ${pipeline.id}`)
}

const sameTags = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((tag, i) => tag === b[i])

export const card: Decider<CardCommand, Card, CardEvent> = {
  initialState: { status: 'none' },
  eventSchemas: { CardCreated, CardUpdated, CardStageChanged, CardDeleted },

  decide(command, state) {
    switch (command.type) {
      case 'CreateCard': {
        const { cardId, workspaceId, pipelineId, stageId, sessionId, tags, now } = command.data
        if (state.status !== 'none') throw new ConflictError(`card ${cardId} already exists`)
        const pipeline = reachablePipeline(command.data.pipeline, pipelineId, workspaceId)
        checkStage(pipeline, stageId)
        const values = applyValues(pipeline.fields, {}, command.data.values, { complete: true })
        return [{ type: 'CardCreated', data: { cardId, pipelineId, workspaceId, stageId, sessionId, values, tags, createdAt: now } }]
      }
      case 'UpdateCard': {
        const { cardId, workspaceId, now } = command.data
        const current = reachableCard(state, cardId, workspaceId)
        const pipeline = reachablePipeline(command.data.pipeline, current.pipelineId, workspaceId)
        const { pipelineId, sessionId } = current
        const events: CardEvent[] = []
        const values = applyValues(pipeline.fields, current.values, command.data.values ?? {}, { complete: false })
        const tags = command.data.tags ?? current.tags
        const changedFieldIds = Object.keys(command.data.values ?? {}).filter((id) => current.values[id] !== values[id])
        const tagsChanged = !sameTags(tags, current.tags)
        if (changedFieldIds.length > 0 || tagsChanged) {
          events.push({ type: 'CardUpdated', data: { cardId, pipelineId, stageId: current.stageId, sessionId, changedFieldIds, tagsChanged, values, tags, updatedAt: now } })
        }
        const { stageId } = command.data
        if (stageId !== undefined && stageId !== current.stageId) {
          checkStage(pipeline, stageId)
          events.push({ type: 'CardStageChanged', data: { cardId, pipelineId, stageId, previousStageId: current.stageId, sessionId, tags, movedAt: now } })
        }
        return events
      }
      case 'DeleteCard': {
        const { cardId, workspaceId, now } = command.data
        const { pipelineId, stageId, sessionId, tags } = reachableCard(state, cardId, workspaceId)
        return [{ type: 'CardDeleted', data: { cardId, pipelineId, stageId, sessionId, tags, deletedAt: now } }]
      }
      default: {
        const exhaustive: never = command
        throw new Error(`unknown command ${String(exhaustive)}`)
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'CardCreated': {
        const { cardId, pipelineId, workspaceId, stageId, sessionId, values, tags, createdAt } = event.data
        return { status: 'active', id: cardId, pipelineId, workspaceId, stageId, sessionId, tags, values, createdAt, movedAt: createdAt }
      }
      case 'CardUpdated':
        return state.status === 'active' ? { ...state, values: event.data.values, tags: event.data.tags } : state
      case 'CardStageChanged':
        return state.status === 'active' ? { ...state, stageId: event.data.stageId, movedAt: event.data.movedAt } : state
      case 'CardDeleted':
        return { status: 'deleted' }
      default: {
        const exhaustive: never = event
        return exhaustive
      }
    }
  },
}
