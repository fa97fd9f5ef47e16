import { Type } from '@sinclair/typebox'
import t from 'tap'
import { closedSchema } from '../../src/commands/closed-schema.js'
import { EventSchemaError, assertMatchesSchema } from '../../src/commands/handle.js'
import { apiKey } from '../../src/domain/api-key.js'
import { card } from '../../src/domain/card.js'
import { flow } from '../../src/domain/flow.js'
import { oauthClient } from '../../src/domain/oauth-client.js'
import { organization } from '../../src/domain/organization.js'
import { pipeline } from '../../src/domain/pipeline.js'
import { secrets } from '../../src/domain/secret.js'
import { sector } from '../../src/domain/sector.js'
import { session } from '../../src/domain/session.js'
import { variables } from '../../src/domain/variables.js'
import { workspace } from '../../src/domain/workspace.js'

// Every append checks its events against their schemas closed to properties they do not name, in
// one compiled check (src/commands/closed-schema.ts); a schema that cannot be closed so would fall
// back to comparing the event with a cleaned copy, many times slower.

const deciders = { apiKey, card, flow, oauthClient, organization, pipeline, secrets, sector, session, variables, workspace }

t.test('every event schema of every decider closes', async (t) => {
  for (const [name, decider] of Object.entries(deciders)) {
    for (const [type, schema] of Object.entries(decider.eventSchemas)) t.ok(closedSchema(schema), `${name}: ${type}`)
  }
})

const sessionId = '0f8fad5b-d9cb-469f-a165-70867728950e'
const messageId = '7c9e6679-7425-40de-944b-e07fc1f90ae7'
const at = '2026-01-01T12:00:00.000Z'
const turnCompleted = (message: Record<string, unknown>) => ({
  type: 'TurnCompleted',
  data: {
    sessionId,
    messageId,
    completedAt: at,
    output: {
      messages: [message],
      functions: [],
      kanban: [],
      variables: { answer: { nested: { deep: true } } },
      warnings: [],
      visited: ['n1'],
      status: 'active',
      state: { waitingAt: null, variables: {}, lastTimestampMicros: 0, card: null },
    },
  },
})
const check = (event: { type: string; data: unknown }) => () => assertMatchesSchema(event, session.eventSchemas)

t.test('a sent message (an intersection of a union and an object): each variant with its node, nothing more', async (t) => {
  const text = { type: 'text', text: { body: 'Hi' }, tags: [], nodeId: 'n1' }
  t.doesNotThrow(check(turnCompleted(text)), 'a text message with its node')
  t.doesNotThrow(check(turnCompleted({ type: 'template', template: { id: 'greet', params: ['x'] }, tags: ['t'], nodeId: 'n2' })), 'a template message')
  t.throws(check(turnCompleted({ ...text, extra: 1 })), { name: 'EventSchemaError', message: /carries properties its schema does not name/ }, 'a property beside the message')
  t.throws(check(turnCompleted({ ...text, text: { body: 'Hi', extra: 1 } })), EventSchemaError, 'a property inside the message')
  const { nodeId: _, ...withoutNode } = text
  t.throws(check(turnCompleted(withoutNode)), { message: /does not match its schema/ }, 'without its node')
  t.throws(check(turnCompleted({ ...text, template: { id: 'greet', params: [] } })), EventSchemaError, "another variant's property")
})

t.test('records take any key, at any depth of their values; an object inside an array is closed', async (t) => {
  const text = { type: 'text', text: { body: 'Hi' }, tags: [], nodeId: 'n1' }
  const event = turnCompleted(text)
  t.doesNotThrow(check(event))
  const output = (event.data as { output: Record<string, unknown> }).output
  const withKanban = { ...event, data: { ...event.data, output: { ...output, kanban: [{ action: 'create', cardId: 'c', pipelineId: 'p', stageId: 's', previousStageId: null, values: {}, tags: [], timestamp: 1, nodeId: 'n', more: true }] } } }
  t.throws(check(withKanban), EventSchemaError, 'a kanban action with a property it does not name')
})

t.test('closing leaves what an object says it takes, and gives up on what it cannot close', async (t) => {
  const open = Type.Object({ a: Type.String() }, { additionalProperties: Type.Object({ b: Type.Number() }) })
  t.same(closedSchema(open), { ...open, additionalProperties: { ...Type.Object({ b: Type.Number() }), additionalProperties: false } }, 'the additional properties closed in turn')
  t.equal(closedSchema(Type.Intersect([Type.Object({ a: Type.String() }), Type.Object({ a: Type.Number() })])), undefined, 'two parts naming one property')
  t.equal(closedSchema(Type.Intersect([Type.Object({ a: Type.String() }), Type.Record(Type.String(), Type.String())])), undefined, 'a record in an intersection')
  t.equal(closedSchema(Type.Object({ a: Type.Ref('Other') })), undefined, 'a reference')
  const fallback = { Open: Type.Intersect([Type.Object({ a: Type.String() }), Type.Record(Type.String(), Type.String())]) }
  t.throws(() => assertMatchesSchema({ type: 'Open', data: { a: 'x', b: 1 } }, fallback), { message: /does not match its schema/ }, 'the fallback still checks the schema')
  t.doesNotThrow(() => assertMatchesSchema({ type: 'Open', data: { a: 'x', b: 'y' } }, fallback), 'and takes what it names')
})
