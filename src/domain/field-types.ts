/**
 * The field types of a kanban pipeline and the JSON type of each one's values. The card's checks
 * (card.ts) and the flow validator read this table; the editor imports this same file to give
 * each field an input of its type, so it holds no imports.
 */
export const FIELD_TYPES = ['text', 'number', 'currency', 'date', 'boolean', 'select', 'email', 'phone'] as const
export type FieldType = (typeof FIELD_TYPES)[number]
/** The JSON type of each field type's values; card.ts narrows each further. */
export const FIELD_VALUE_TYPES = {
  text: 'string',
  number: 'number',
  currency: 'number',
  date: 'string',
  boolean: 'boolean',
  select: 'string',
  email: 'string',
  phone: 'string',
} as const satisfies Record<FieldType, 'string' | 'number' | 'boolean'>
