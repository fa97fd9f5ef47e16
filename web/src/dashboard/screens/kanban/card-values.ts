import { FIELD_VALUE_TYPES } from '../../../../../src/domain/field-types.js'
import type { Card, CardValue, Pipeline, PipelineField } from './api-types'

/** Fields whose values are numbers: the card list answers their sums per column. */
export const isNumeric = (field: PipelineField): boolean => FIELD_VALUE_TYPES[field.type] === 'number'

/** The text field first in order names a card; a card without it is named by the start of its id. */
export function titleField(pipeline: Pipeline): PipelineField | undefined {
  return pipeline.fields.find((field) => field.type === 'text')
}

export function cardTitle(pipeline: Pipeline, card: Card): string {
  const field = titleField(pipeline)
  const value = field ? card.values[field.id] : undefined
  return value === undefined || value === '' ? `#${card.id.slice(0, 8)}` : String(value)
}

/** What a card shows under its title: its featured fields that hold a value, the title field aside. */
export function featuredValues(pipeline: Pipeline, card: Card): { field: PipelineField; value: CardValue }[] {
  const title = titleField(pipeline)
  return pipeline.fields
    .filter((field) => field.isFeatured && field.id !== title?.id && card.values[field.id] !== undefined)
    .map((field) => ({ field, value: card.values[field.id]! }))
}

/** A value as the reader's language writes it: currencies with their code, numbers grouped, dates as dates. */
export function formatValue(field: PipelineField, value: CardValue, lang: string, yesNo: { yes: string; no: string }): string {
  if (typeof value === 'boolean') return value ? yesNo.yes : yesNo.no
  if (typeof value === 'number') {
    if (field.type === 'currency' && field.currency) return new Intl.NumberFormat(lang, { style: 'currency', currency: field.currency }).format(value)
    return new Intl.NumberFormat(lang).format(value)
  }
  if (field.type === 'date' && /^\d{4}-\d{2}-\d{2}$/.test(value)) {
    return new Date(`${value}T00:00:00Z`).toLocaleDateString(lang, { dateStyle: 'medium', timeZone: 'UTC' })
  }
  return value
}

/** What a form input holds for a value (inputs hold text; booleans are a checkbox, handled apart). */
export const inputText = (value: CardValue | undefined): string => (value === undefined || typeof value === 'boolean' ? '' : String(value))

/**
 * The typed value a field's text input means: a number for number and currency fields, the text for
 * the rest; undefined for an empty input. Text that is no number stays text, so the API names the
 * problem on that field.
 */
export function valueFromInput(field: PipelineField, text: string): CardValue | undefined {
  const trimmed = text.trim()
  if (trimmed === '') return undefined
  if (isNumeric(field)) {
    const number = Number(trimmed)
    return Number.isFinite(number) ? number : trimmed
  }
  return text
}

/** Tags as typed in one input, separated by commas (a tag never holds a comma). */
export const tagsFromInput = (text: string): string[] => [...new Set(text.split(',').map((tag) => tag.trim()).filter((tag) => tag !== ''))]
