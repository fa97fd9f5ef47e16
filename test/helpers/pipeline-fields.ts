import type { Field } from '../../src/domain/pipeline.js'

/** A pipeline field as a new one is made: optional, not featured, first; a currency field counts in BRL. */
export const pipelineField = (id: string, name: string, type: Field['type'], extra: Partial<Field> = {}): Field => ({
  id,
  name,
  type,
  required: false,
  isFeatured: false,
  order: 0,
  options: null,
  currency: type === 'currency' ? 'BRL' : null,
  ...extra,
})
