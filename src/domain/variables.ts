import { Type, type Static } from '@sinclair/typebox'
import { VariableValue } from './turn.js'
import { BadRequestError, ConflictError, NotFoundError } from '../errors.js'
import type { Decider } from './decider.js'
import { VariableName as FlowVariableName } from './flow-definition.js'
import { sameJson } from './json.js'
import { Timestamp, Uuid } from './schemas.js'

/**
 * Workspace variables: the names a flow reads and writes and a session is started with. All
 * variables of a workspace live in one stream, so a name is unique exactly, even under concurrent
 * requests: the second define of a name is decided on a state that holds the first.
 */
export const variablesStream = (workspaceId: string) => `variables-${workspaceId}`

/** Filled by the engine in every session; read-only, so no workspace variable may take these names. */
export const SYSTEM_VARIABLES: readonly string[] = ['sessionId', 'externalId', 'flowId', 'workspaceId', 'lastMessage']

export const VARIABLE_TYPES = ['string', 'number', 'boolean', 'object'] as const
export type VariableType = (typeof VARIABLE_TYPES)[number]

/** A name as flows write it, bounded for storage. */
export const VariableName = Type.String({ pattern: FlowVariableName.pattern, maxLength: 100 })
const VariableTypeSchema = Type.Union(VARIABLE_TYPES.map((type) => Type.Literal(type)))
const Description = Type.Union([Type.String({ maxLength: 1000 }), Type.Null()])
const DefaultValue = Type.Union([VariableValue, Type.Null()])

const VariableDefined = Type.Object({
  workspaceId: Uuid,
  variableId: Uuid,
  name: VariableName,
  type: VariableTypeSchema,
  description: Description,
  defaultValue: DefaultValue,
  definedAt: Timestamp,
})
/** The description and default after the change. */
const VariableChanged = Type.Object({ workspaceId: Uuid, variableId: Uuid, description: Description, defaultValue: DefaultValue, changedAt: Timestamp })
const VariableRemoved = Type.Object({ workspaceId: Uuid, variableId: Uuid, name: VariableName, removedAt: Timestamp })

export type VariableEvent =
  | { type: 'VariableDefined'; data: Static<typeof VariableDefined> }
  | { type: 'VariableChanged'; data: Static<typeof VariableChanged> }
  | { type: 'VariableRemoved'; data: Static<typeof VariableRemoved> }

/**
 * `description` and `defaultValue`: null clears, undefined keeps. `name` and `type` may be sent
 * back unchanged (an editor saving the whole record) but never changed.
 */
export type VariableCommand =
  | {
      type: 'DefineVariable'
      data: { workspaceId: string; variableId: string; name: string; type: VariableType; description: string | null; defaultValue: VariableValue | null; now: string }
    }
  | {
      type: 'ChangeVariable'
      data: {
        workspaceId: string
        variableId: string
        name?: string
        type?: VariableType
        description?: string | null
        defaultValue?: VariableValue | null
        now: string
      }
    }
  | { type: 'RemoveVariable'; data: { workspaceId: string; variableId: string; now: string } }

export interface WorkspaceVariable {
  id: string
  name: string
  type: VariableType
  description: string | null
  defaultValue: VariableValue | null
  createdAt: string
  updatedAt: string
}

/** The live variables of one workspace, by id. */
export interface WorkspaceVariables {
  byId: Readonly<Record<string, WorkspaceVariable>>
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/** Whether a value is of a variable type; `object` means a JSON object, never an array or null. */
export const matchesType = (type: VariableType, value: unknown): value is VariableValue => {
  switch (type) {
    case 'string':
      return typeof value === 'string'
    case 'number':
      return typeof value === 'number' && Number.isFinite(value)
    case 'boolean':
      return typeof value === 'boolean'
    case 'object':
      return isPlainObject(value)
    default: {
      const exhaustive: never = type
      return exhaustive
    }
  }
}

/** The type a value has as a variable value, if it is one. */
export const typeOfValue = (value: unknown): VariableType | undefined => VARIABLE_TYPES.find((type) => matchesType(type, value))

const article = (type: VariableType) => (type === 'object' ? 'an object' : `a ${type}`)

const checkDefault = (type: VariableType, value: VariableValue | null): void => {
  if (value !== null && !matchesType(type, value)) throw new BadRequestError(`defaultValue must be ${article(type)}, the variable's type`)
}

const reachable = (state: WorkspaceVariables, variableId: string): WorkspaceVariable => {
  const found = state.byId[variableId]
  if (!found) throw new NotFoundError(`variable ${variableId} not found`)
  return found
}

export const variables: Decider<VariableCommand, WorkspaceVariables, VariableEvent> = {
  initialState: { byId: {} },
  eventSchemas: { VariableDefined, VariableChanged, VariableRemoved },

  decide(command, state) {
    switch (command.type) {
      case 'DefineVariable': {
        const { now, ...data } = command.data
        if (SYSTEM_VARIABLES.includes(data.name)) throw new BadRequestError(`"${data.name}" is a system variable; choose another name`)
        if (Object.values(state.byId).some((v) => v.name === data.name)) throw new ConflictError(`variable "${data.name}" already exists in this workspace`)
        if (state.byId[data.variableId]) throw new ConflictError(`variable ${data.variableId} already exists`)
        checkDefault(data.type, data.defaultValue)
        return [{ type: 'VariableDefined', data: { ...data, definedAt: now } }]
      }
      case 'ChangeVariable': {
        const { workspaceId, variableId, now } = command.data
        const current = reachable(state, variableId)
        // Flows and running sessions refer to a variable by its name and rely on its type.
        if (command.data.name !== undefined && command.data.name !== current.name) {
          throw new BadRequestError(`variable "${current.name}" cannot be renamed: flows refer to it by name; define a new variable instead`)
        }
        if (command.data.type !== undefined && command.data.type !== current.type) {
          throw new BadRequestError(`the type of variable "${current.name}" cannot change; define a new variable instead`)
        }
        const description = command.data.description === undefined ? current.description : command.data.description
        const defaultValue = command.data.defaultValue === undefined ? current.defaultValue : command.data.defaultValue
        checkDefault(current.type, defaultValue)
        if (description === current.description && sameJson(defaultValue, current.defaultValue)) return []
        return [{ type: 'VariableChanged', data: { workspaceId, variableId, description, defaultValue, changedAt: now } }]
      }
      case 'RemoveVariable': {
        const { workspaceId, variableId, now } = command.data
        const current = reachable(state, variableId)
        return [{ type: 'VariableRemoved', data: { workspaceId, variableId, name: current.name, removedAt: now } }]
      }
      default: {
        const exhaustive: never = command
        throw new Error(`unknown command ${String(exhaustive)}`)
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'VariableDefined': {
        const { variableId, name, type, description, defaultValue, definedAt } = event.data
        const variable = { id: variableId, name, type, description, defaultValue, createdAt: definedAt, updatedAt: definedAt }
        return { byId: { ...state.byId, [variableId]: variable } }
      }
      case 'VariableChanged': {
        const current = state.byId[event.data.variableId]
        if (!current) return state
        const { description, defaultValue, changedAt } = event.data
        return { byId: { ...state.byId, [current.id]: { ...current, description, defaultValue, updatedAt: changedAt } } }
      }
      case 'VariableRemoved': {
        const { [event.data.variableId]: _removed, ...rest } = state.byId
        return { byId: rest }
      }
      default: {
        const exhaustive: never = event
        return exhaustive
      }
    }
  },
}

/** What a session is started with: every given value checked, every missing one filled by its default. */
export interface SessionVariables {
  values: Record<string, VariableValue>
  /** One line per offending key, naming it. */
  problems: string[]
}

/**
 * Checks the variables a session is created with against the workspace's: unknown names, system
 * names and values of the wrong type are problems; a variable not given takes its default, if any.
 */
export function resolveSessionVariables(
  defined: readonly Pick<WorkspaceVariable, 'name' | 'type' | 'defaultValue'>[],
  given: Readonly<Record<string, unknown>>,
): SessionVariables {
  const byName = new Map(defined.map((variable) => [variable.name, variable]))
  const values: Record<string, VariableValue> = {}
  const problems: string[] = []
  for (const [name, value] of Object.entries(given)) {
    const variable = byName.get(name)
    if (SYSTEM_VARIABLES.includes(name)) problems.push(`variables.${name}: a system variable; the engine sets it`)
    else if (!variable) problems.push(`variables.${name}: no variable "${name}" in this workspace`)
    else if (!matchesType(variable.type, value)) problems.push(`variables.${name}: must be ${article(variable.type)}`)
    else values[name] = value
  }
  for (const variable of defined) {
    if (!Object.hasOwn(given, variable.name) && variable.defaultValue !== null) values[variable.name] = structuredClone(variable.defaultValue)
  }
  return { values, problems }
}
