import { existsSync, readFileSync } from 'node:fs'
import { Type, type Static } from '@sinclair/typebox'
import t from 'tap'
import { VariableName } from '../../../src/domain/flow-definition.js'
import type { VariableType } from '../../../src/domain/variables.js'
import { toRunnable } from '../../../src/engine/flow-versions.js'
import { lookup } from '../../../src/domain/interpolate.js'
import { initialConversation, runTurn } from '../../../src/engine/interpreter.js'
import { checkTarget } from '../../../src/domain/nodes/checks.js'
import { nodeTypeOf, nodeTypes, type NodeTypes } from '../../../src/domain/nodes/index.js'
import { UNNAMED_EXIT, type CheckContext, type NodeOf, type NodeType, type Step, type Visit } from '../../../src/domain/nodes/node-type.js'
import { validateFlow, type WorkspaceCatalog } from '../../../src/domain/validate-flow.js'
import { examples } from '../../helpers/decider-spec.js'
import { NOW } from '../../helpers/engine.js'

// A node type added as docs/flow-definition.md ("Adding a node type") describes: one module
// (step 1) and its line in the registry (step 2), here spread into a registry of the test's own.
const schema = Type.Object({ variable: VariableName, by: Type.Integer({ minimum: 1, maximum: 100 }) })
const increment: NodeType<typeof schema> = {
  schema,
  exits: () => UNNAMED_EXIT,
  writes: (data) => (typeof data.variable === 'string' ? data.variable : undefined),
  check: ({ variable }: Static<typeof schema>, context: CheckContext) => checkTarget(variable, 'number', 'increment counts numbers', ['variable'], context),
  run: ({ data }: NodeOf<typeof schema>, visit: Visit): Step => {
    const current = lookup(visit.scope(), data.variable)
    visit.assign(data.variable, (typeof current === 'number' ? current : 0) + data.by)
    return { exit: null }
  },
}
const types: NodeTypes = { ...nodeTypes, increment }

const catalog: WorkspaceCatalog = {
  sectorIds: new Set(),
  pipelines: new Map(),
  variables: new Map<string, VariableType>([
    ['visits', 'number'],
    ['name', 'string'],
  ]),
}
const at = { x: 0, y: 0 }
const definition = (data: Record<string, unknown>) => ({
  schemaVersion: 1 as const,
  nodes: [
    { id: 'start', type: 'start', position: at, data: {} },
    { id: 'count', type: 'increment', position: at, data },
    { id: 'thanks', type: 'message', position: at, data: { messages: [{ type: 'text', text: { body: 'Visit {{visits}}' } }] } },
  ],
  edges: [
    { id: 'e1', source: 'start', target: 'count' },
    { id: 'e2', source: 'count', target: 'thanks' },
  ],
})
const context = { nowMicros: NOW, timeZone: 'UTC', newId: () => 'id', random: () => 0, system: { sessionId: 's', externalId: '', flowId: 'f', workspaceId: 'w', lastMessage: '' } }

t.test('a registered node type is validated and run by the real validator and interpreter', async (t) => {
  const valid = definition({ variable: 'visits', by: 2 })
  t.same(validateFlow(valid, catalog, types), [], 'its data and its exit pass; the variable it writes is known to templates')
  const flow = toRunnable(valid, types)
  if (typeof flow === 'string') return t.fail('the flow runs')
  const out = runTurn(flow, initialConversation({ visits: 40 }), { type: 'start' }, context, types)
  t.equal(out.status, 'completed')
  t.same(out.visited, ['start', 'count', 'thanks'])
  t.same(out.variables, { visits: 42 })
  t.same(
    out.messages.map((m) => (m.type === 'text' ? m.text.body : m.type)),
    ['Visit 42'],
  )
})

t.test("a registered node type's schema, checks and exits report problems at the node", async (t) => {
  t.same(validateFlow(definition({ variable: 'visits', by: 0 }), catalog, types), [{ path: 'nodes[1].data.by', message: 'must be at least 1' }])
  t.same(validateFlow(definition({ variable: 'name', by: 1 }), catalog, types), [
    { path: 'nodes[1].data.variable', message: 'variable "name" holds a string, but increment counts numbers' },
  ])
  const named = definition({ variable: 'visits', by: 1 })
  named.edges[1] = { ...named.edges[1]!, sourceHandle: 'next' } as (typeof named.edges)[number]
  t.same(validateFlow(named, catalog, types), [
    { path: 'edges[1].sourceHandle', message: 'node "count" (increment) has one unnamed exit; leave sourceHandle out' },
  ])
})

t.test('without its registry line the type is unknown to the validator, toRunnable and the interpreter', async (t) => {
  const valid = definition({ variable: 'visits', by: 1 })
  t.same(validateFlow(valid, catalog)[0], { path: 'nodes[1].type', message: 'unknown node type "increment"; one of start, message, question, condition, split, setVariable, httpRequest, ai, waitForEvent, delay, runFlow, transfer, kanbanMove, end' })
  t.equal(toRunnable(valid), 'node count has unknown type increment')
  const flow = toRunnable(valid, types)
  if (typeof flow === 'string') return t.fail('the flow runs with the type')
  const out = runTurn(flow, initialConversation(), { type: 'start' }, context)
  t.equal(out.status, 'error')
  t.match(out.warnings[0], /^engine failure in node count: unknown node type in /)
})

t.test('"Adding a node type" lists at most 6 files, and every node type has the modules it names', async (t) => {
  const docs = readFileSync(new URL('../../../docs/flow-definition.md', import.meta.url), 'utf8')
  const section = docs.split('## Adding a node type')[1]?.split('\n## ')[0] ?? ''
  const steps = [...section.matchAll(/^\d+\. `([^`]+)`/gm)].map((match) => match[1]!)
  t.ok(steps.length > 0 && steps.length <= 6, `${steps.length} files`)
  const kebab = (type: string) => type.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)
  for (const step of steps) {
    const paths = step.includes('/wait.') ? Object.keys(nodeTypes).map((type) => step.replace('wait', kebab(type))) : [step]
    for (const path of paths) t.ok(existsSync(new URL(`../../../${path}`, import.meta.url)), path)
  }
})

t.test('nodeTypeOf', async (t) => {
  examples(t, nodeTypeOf, [
    ['a type of the registry', [types, 'increment'], increment],
    ['a type the registry lacks', [nodeTypes, 'increment'], undefined],
    ["a name of Object.prototype's is no type", [nodeTypes, 'toString'], undefined],
  ])
  t.same(Object.keys(nodeTypes), ['start', 'message', 'question', 'condition', 'split', 'setVariable', 'httpRequest', 'ai', 'waitForEvent', 'delay', 'runFlow', 'transfer', 'kanbanMove', 'end'], "the registry in the palette's order")
})
