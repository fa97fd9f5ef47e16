import t from 'tap'
import { matchesType, resolveSessionVariables, typeOfValue, variables, variablesStream, type VariableCommand, type VariableEvent } from '../../src/domain/variables.js'
import { BadRequestError, ConflictError, NotFoundError } from '../../src/errors.js'
import { examples, spec } from '../helpers/decider-spec.js'

const ws = '0190a0b0-0000-7000-8000-000000000011'
const planId = '0190a0b0-0000-7000-8000-000000000901'
const ageId = '0190a0b0-0000-7000-8000-000000000902'
const definedAt = '2026-01-01T00:00:00.000Z'
const now = '2026-01-02T03:04:05.678Z'

type Define = Extract<VariableCommand, { type: 'DefineVariable' }>['data']
const define = (data: Partial<Define> = {}): VariableCommand => ({
  type: 'DefineVariable',
  data: { workspaceId: ws, variableId: planId, name: 'plan', type: 'string', description: 'The plan chosen', defaultValue: 'basic', now: definedAt, ...data },
})
const defined = (data: Partial<Extract<VariableEvent, { type: 'VariableDefined' }>['data']> = {}): VariableEvent => ({
  type: 'VariableDefined',
  data: { workspaceId: ws, variableId: planId, name: 'plan', type: 'string', description: 'The plan chosen', defaultValue: 'basic', definedAt, ...data },
})
const change = (data: Partial<Extract<VariableCommand, { type: 'ChangeVariable' }>['data']>): VariableCommand => ({ type: 'ChangeVariable', data: { workspaceId: ws, variableId: planId, now, ...data } })
const changed = (description: string | null, defaultValue: Extract<VariableEvent, { type: 'VariableChanged' }>['data']['defaultValue']): VariableEvent => ({
  type: 'VariableChanged',
  data: { workspaceId: ws, variableId: planId, description, defaultValue, changedAt: now },
})
const removed: VariableEvent = { type: 'VariableRemoved', data: { workspaceId: ws, variableId: planId, name: 'plan', removedAt: now } }

t.test('DefineVariable', async (t) => {
  const { given } = spec(t, variables)
  given().when(define()).then([defined()], 'a new name')
  given(defined()).when(define({ variableId: ageId, type: 'number', defaultValue: null })).thenRejects({ type: ConflictError, message: /"plan" already exists/ }, 'a name is unique in its workspace')
  given(defined()).when(define({ name: 'age', type: 'number', defaultValue: 3 })).thenRejects(ConflictError, 'the same id twice')
  given(defined(), removed).when(define({ variableId: ageId })).then([defined({ variableId: ageId })], 'a removed name is free again')
  given().when(define({ name: 'sessionId' })).thenRejects({ type: BadRequestError, message: /system variable/ }, 'a system variable\'s name')
  given().when(define({ type: 'number', defaultValue: '3' })).thenRejects({ type: BadRequestError, message: /defaultValue must be a number/ }, 'a default of another type')
  given().when(define({ type: 'object', defaultValue: { tier: 'gold' } })).then([defined({ type: 'object', defaultValue: { tier: 'gold' } })], 'an object default')
  given().when(define({ name: '1plan' })).thenRejects(/name/, 'the event schema wants a name flows can write')
})

t.test('ChangeVariable', async (t) => {
  const { given } = spec(t, variables)
  given(defined()).when(change({ description: 'Chosen at signup' })).then([changed('Chosen at signup', 'basic')], 'a new description keeps the default')
  given(defined()).when(change({ defaultValue: null })).then([changed('The plan chosen', null)], 'null clears the default')
  given(defined()).when(change({ name: 'plan', type: 'string', description: 'The plan chosen', defaultValue: 'basic' })).thenNothing('the whole record sent back unchanged')
  given(defined({ type: 'object', defaultValue: { a: 1, b: 2 } })).when(change({ defaultValue: { b: 2, a: 1 } })).thenNothing('the same object default in another key order')
  given(defined(), changed('Chosen at signup', 'basic')).when(change({ description: 'Chosen at signup' })).thenNothing('evolve applied the earlier change')
  given(defined()).when(change({ name: 'tier' })).thenRejects({ type: BadRequestError, message: /cannot be renamed/ }, 'never renamed')
  given(defined()).when(change({ type: 'number' })).thenRejects({ type: BadRequestError, message: /cannot change/ }, 'never retyped')
  given(defined()).when(change({ defaultValue: 3 })).thenRejects({ type: BadRequestError, message: /must be a string/ }, 'a default of another type')
  given().when(change({ description: null })).thenRejects(NotFoundError, 'no such variable')
  given(defined(), removed).when(change({ description: null })).thenRejects(NotFoundError, 'a removed variable')
})

t.test('RemoveVariable', async (t) => {
  const { given } = spec(t, variables)
  const remove: VariableCommand = { type: 'RemoveVariable', data: { workspaceId: ws, variableId: planId, now } }
  const state = given(defined(), defined({ variableId: ageId, name: 'age', type: 'number', defaultValue: null })).when(remove).then([removed], 'the removal names the variable')
  t.same(Object.keys(state.byId), [ageId], 'the others stay')
  given(defined(), removed).when(remove).thenRejects(NotFoundError, 'removed already')
  examples(t, variablesStream, [['one stream for all variables of a workspace', [ws], `variables-${ws}`]])
})

t.test('matchesType and typeOfValue', async (t) => {
  examples(t, matchesType, [
    ['a string', ['string', ''], true],
    ['NaN is no number', ['number', Number.NaN], false],
    ['an array is no object', ['object', []], false],
    ['null is no object', ['object', null], false],
    ['a plain object', ['object', { a: 1 }], true],
    ['a boolean', ['boolean', false], true],
  ])
  examples(t, typeOfValue, [
    ['a number', [3], 'number'],
    ['an object', [{}], 'object'],
    ['null is no variable value', [null], undefined],
    ['nor is an array', [[1]], undefined],
  ])
})

t.test('resolveSessionVariables', async (t) => {
  const workspace = [
    { name: 'plan', type: 'string' as const, defaultValue: 'basic' },
    { name: 'age', type: 'number' as const, defaultValue: null },
    { name: 'profile', type: 'object' as const, defaultValue: { tier: 'gold' } },
  ]
  examples(t, resolveSessionVariables, [
    ['given values kept, missing ones take their default', [workspace, { age: 30 }], { values: { age: 30, plan: 'basic', profile: { tier: 'gold' } }, problems: [] }],
    ['a given value wins over the default', [workspace, { plan: 'pro' }], { values: { plan: 'pro', profile: { tier: 'gold' } }, problems: [] }],
    [
      'each offending key is a problem naming it',
      [workspace, { age: 'thirty', sessionId: 'x', nickname: 'Ana' }],
      {
        values: { plan: 'basic', profile: { tier: 'gold' } },
        problems: ['variables.age: must be a number', 'variables.sessionId: a system variable; the engine sets it', 'variables.nickname: no variable "nickname" in this workspace'],
      },
    ],
  ])
  const resolved = resolveSessionVariables(workspace, {})
  t.not(resolved.values.profile, workspace[2]!.defaultValue, 'a default object is copied, never shared with the workspace')
})
