import { FIELD_TYPES } from '../../../../../src/domain/field-types.js'
import type { paths } from '../../api'

export { FIELD_TYPES }

// The client's answer type has neither always-null member; the screens need neither.
export type Pipeline = Omit<paths['/v1/kanban/pipelines/{id}']['get']['responses'][200]['content']['application/json'], 'defaultGroupBy' | 'columnAggregation'>
export type Stage = Pipeline['stages'][number]
export type PipelineField = Pipeline['fields'][number]
export type FieldType = PipelineField['type']
export type Card = paths['/v1/kanban/cards/{id}']['get']['responses'][200]['content']['application/json']
export type CardValue = Card['values'][string]
export type CardList = paths['/v1/kanban/pipelines/{pipelineId}/cards']['get']['responses'][200]['content']['application/json']
