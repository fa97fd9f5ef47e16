import t from 'tap'
import { valueMisfit } from '../../src/domain/card.js'
import { FIELD_TYPES, FIELD_VALUE_TYPES } from '../../src/domain/field-types.js'
import type { Field } from '../../src/domain/pipeline.js'
import { examples } from '../helpers/decider-spec.js'

const sample = { string: 'x', number: 1, boolean: true } as const

t.test('FIELD_VALUE_TYPES', async (t) => {
  t.same(Object.keys(FIELD_VALUE_TYPES).sort(), [...FIELD_TYPES].sort(), 'every field type has the JSON type of its values, and only they do')
  t.same(
    FIELD_TYPES.filter((type) => FIELD_VALUE_TYPES[type] === 'number'),
    ['number', 'currency'],
    'numbers and currencies hold numbers',
  )
  /** Whether a card refuses a field of `type` each value of another JSON type. */
  const refusesOthers = function refusesOthers(type: Field['type']) {
    const field: Field = { id: 'f', name: 'F', type, required: false, isFeatured: false, order: 0, options: type === 'select' ? ['x'] : null, currency: type === 'currency' ? 'BRL' : null }
    return Object.entries(sample).filter(([json]) => json !== FIELD_VALUE_TYPES[type]).every(([, value]) => valueMisfit(field, value) !== undefined)
  }
  examples(t, refusesOthers, FIELD_TYPES.map((type) => [`a card refuses a ${type} field a value of another JSON type`, [type], true] as const))
})
