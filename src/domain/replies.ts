import { parseCalendarDate, type CalendarDate } from './calendar-date.js'
import type { OutgoingMessage } from './flow-definition.js'
import type { InputKind } from './nodes/question.js'
import type { InboundMessage, VariableValue } from './turn.js'

export type Choice = { id: string; title: string }

/** A reply the question accepts: the value to save and the handle to leave by. */
export type Reply = { value: VariableValue; handle: string } | null

const NUMBER = /^[+-]?(?:\d+(?:[.,]\d+)?|[.,]\d+)$/
// Unambiguous (the domain's labels exclude the dot that separates them), so it runs in linear time.
const EMAIL = /^[^\s@]+@[^\s@.]+(?:\.[^\s@.]+)+$/
const MAX_EMAIL_LENGTH = 254
const PHONE = /^\+?(\d{8,15})$/
const MEDIA_TYPES: ReadonlySet<string> = new Set(['image', 'video', 'audio', 'document', 'sticker'])

/** A decimal number as people type it: `42`, `-3`, `1.5` or `1,5` (comma as the decimal separator). */
export const parseNumber = (text: string): number | undefined => {
  const trimmed = text.trim()
  if (!NUMBER.test(trimmed)) return undefined
  const value = Number(trimmed.replace(',', '.'))
  return Number.isFinite(value) ? value : undefined
}

/** The choices a question offers: its prompt's buttons, or every row of its list. */
export const choicesOf = (prompt: OutgoingMessage | undefined): Choice[] => {
  if (prompt?.type !== 'interactive') return []
  const interactive = prompt.interactive
  if (interactive.type === 'button') return interactive.action.buttons.map(({ id, title }) => ({ id, title }))
  if (interactive.type === 'list') return interactive.action.sections.flatMap((section) => section.rows.map(({ id, title }) => ({ id, title })))
  return []
}

const textOf = (message: InboundMessage): string | undefined => (message.type === 'text' ? message.text.body.trim() : undefined)

const same = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase()

const pickChoice = (message: InboundMessage, choices: Choice[]): Choice | undefined => {
  if (message.type === 'interactive') {
    const picked = message.interactive.type === 'button_reply' ? message.interactive.button_reply : message.interactive.list_reply
    return choices.find((choice) => choice.id === picked.id) ?? choices.find((choice) => same(choice.title, picked.title.trim()))
  }
  const typed = textOf(message)
  if (!typed) return undefined
  return choices.find((choice) => same(choice.title, typed)) ?? choices.find((choice) => same(choice.id, typed))
}

const valid = (value: VariableValue): Reply => ({ value, handle: 'default' })

/**
 * Validates a reply to a question by its input kind. A reply of another message type is simply
 * invalid (null). `choices` are the question's, titles already interpolated; `today` is the turn's
 * date in the workspace's time zone, which the words today and tomorrow count from.
 */
export const parseReply = (kind: InputKind, message: InboundMessage, choices: Choice[], today: () => CalendarDate): Reply => {
  switch (kind) {
    case 'text': {
      const text = textOf(message)
      return text ? valid(text) : null
    }
    case 'number': {
      const text = textOf(message)
      const value = text === undefined ? undefined : parseNumber(text)
      return value === undefined ? null : valid(value)
    }
    case 'email': {
      const text = textOf(message)
      return text !== undefined && text.length <= MAX_EMAIL_LENGTH && EMAIL.test(text) ? valid(text) : null
    }
    case 'phone': {
      const digits = textOf(message)?.replace(/[\s()-]/g, '').match(PHONE)?.[1]
      return digits ? valid(`+${digits}`) : null
    }
    case 'date': {
      const text = textOf(message)
      const date = text === undefined ? undefined : parseCalendarDate(text, today)
      return date === undefined ? null : valid(date)
    }
    case 'media': {
      if (message.type === 'text' || message.type === 'interactive' || !MEDIA_TYPES.has(message.type)) return null
      const { mimeType, url, caption } = message.media
      return valid({ type: message.type, mimeType, url, ...(caption !== undefined && { caption }) })
    }
    case 'choice': {
      const choice = pickChoice(message, choices)
      return choice ? { value: choice.id, handle: choice.id } : null
    }
    default: {
      const unknown: never = kind
      throw new Error(`unknown input kind ${String(unknown)}`)
    }
  }
}
