import type { Static } from '@sinclair/typebox'
import * as ai from './ai.js'
import * as condition from './condition.js'
import * as delay from './delay.js'
import * as end from './end.js'
import * as httpRequest from './http-request.js'
import * as kanbanMove from './kanban-move.js'
import * as message from './message.js'
import type { NodeType } from './node-type.js'
import * as question from './question.js'
import * as runFlow from './run-flow.js'
import * as setVariable from './set-variable.js'
import * as split from './split.js'
import * as start from './start.js'
import * as transfer from './transfer.js'
import * as waitForEvent from './wait-for-event.js'

/** Every node type by its `type`, in the order the editor's palette offers them. */
export const nodeTypes = { start, message, question, condition, split, setVariable, httpRequest, ai, waitForEvent, delay, runFlow, transfer, kanbanMove, end } satisfies NodeTypes

/** A registry of node types; the engine's functions take another one where a test extends it. */
export type NodeTypes = Readonly<Record<string, NodeType>>

export type NodeTypeName = keyof typeof nodeTypes
export type NodeData<T extends NodeTypeName> = Static<(typeof nodeTypes)[T]['schema']>

/** A node whose `data` is known to match its type's schema (after validation). */
export type TypedNode = { [T in NodeTypeName]: { id: string; type: T; position: { x: number; y: number }; data: NodeData<T> } }[NodeTypeName]

/** The registry's type of that name; none for a name it lacks, including `Object.prototype`'s. */
export const nodeTypeOf = (types: NodeTypes, name: string): NodeType | undefined => (Object.hasOwn(types, name) ? types[name] : undefined)
