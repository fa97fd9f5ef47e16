import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { conversationTestOf, deleteConversationTest, listConversationTests, saveConversationTest, type TestsContext } from '../../commands/conversation-tests.js'
import { CONVERSATION_TEST_LIMITS, ConversationTestBody, testOfSession } from '../../domain/conversation-test.js'
import type { SessionEvent } from '../../domain/session.js'
import { readSessionHistory } from '../../audit/session-history.js'
import { NotFoundError } from '../../errors.js'
import { runConversationTests } from '../../engine/conversation-tests.js'
import { FlowVersions } from '../../engine/flow-versions.js'
import type { AppDeps } from '../app.js'
import { commandContext } from '../context.js'
import type { Tag } from '../openapi.js'
import { EmptyBody, MAX_INT32, Page, Timestamp, Uuid, errorResponses, pageQuery, toPage, OPTIONAL_BODY } from '../schemas.js'

export const openApiTag: Tag = { name: 'flow-tests', description: "Conversation tests kept with a flow, run against its draft or a version" }

const ConversationTest = Type.Composite([Type.Object({ id: Uuid }), ConversationTestBody, Type.Object({ createdAt: Timestamp, updatedAt: Timestamp })])

const Problem = Type.Object({
  at: Type.String({ description: 'what differs: `messages[0].text`, `variables.status`, `waitsAt`…' }),
  expected: Type.Unknown(),
  actual: Type.Unknown(),
})

const StepResult = Type.Object({
  step: Type.Integer({ minimum: 0, description: "0: the session's start; then the test's steps from 1" }),
  passed: Type.Boolean(),
  problems: Type.Array(Problem),
  said: Type.Array(Type.String(), { description: "the words of the turn's messages" }),
  waitsAt: Type.Union([Type.String(), Type.Null()]),
  status: Type.Union([Type.Literal('active'), Type.Literal('completed'), Type.Literal('error')]),
})

const TestRun = Type.Object({
  flowId: Uuid,
  version: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: 'the published version run; null: the draft' }),
  draftVersion: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: "the draft's version run (as the flow's `draftVersion`); null when a published version ran" }),
  passed: Type.Boolean({ description: 'every test run passed' }),
  tests: Type.Array(
    Type.Object({
      id: Uuid,
      name: Type.String(),
      passed: Type.Boolean(),
      stopped: Type.Optional(Type.String({ description: 'why the test stopped before its last step, in words' })),
      stop: Type.Optional(
        Type.Union(
          [
            Type.Object({ step: Type.Integer({ minimum: 0 }), reason: Type.Literal('ended') }),
            Type.Object({ step: Type.Integer({ minimum: 0 }), reason: Type.Literal('no_pending_timer'), nodeId: Type.Union([Type.String(), Type.Null()]) }),
            Type.Object({ step: Type.Integer({ minimum: 0 }), reason: Type.Literal('unanswered_call'), nodeId: Type.String() }),
          ],
          { description: 'the same as a value: the conversation had ended, no timer was pending at the node it waited at, or a call the test gives no answer for' },
        ),
      ),
      steps: Type.Array(StepResult),
    }),
  ),
})

const FlowParams = Type.Object({ id: Uuid })
const TestParams = Type.Object({ id: Uuid, testId: Uuid })

const example = {
  name: 'Looks up a shipped order',
  answers: [{ nodeId: 'lookup', answer: { status: 200, headers: {}, body: '{"status":"shipped"}' } }],
  start: { messages: [{ text: { equals: 'Your order number?' } }] },
  steps: [{ send: { type: 'text', text: { body: '1234' } }, expect: { messages: [{ text: { pattern: 'Your order is *' } }], variables: { status: 'shipped' } } }],
}

export const routes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const flows = new FlowVersions(deps.store)
    const testsContext = (request: FastifyRequest): TestsContext => ({ ...commandContext(deps, request), db: deps.db })

    app.get(
      '/flows/:id/tests',
      {
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'listFlowTests',
          summary: "List a flow's conversation tests",
          description: `A page of the flow's tests in name order; a flow keeps at most ${CONVERSATION_TEST_LIMITS.perFlow}.`,
          params: FlowParams,
          querystring: Type.Object(pageQuery({ default: 10, maximum: 100 })),
          response: { 200: Page(ConversationTest), ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => {
        const { page, size } = request.query
        const { content, totalElements } = await listConversationTests(testsContext(request), request.principal, request.params.id, { page, size })
        return toPage(content, totalElements, page, size)
      },
    )

    app.post(
      '/flows/:id/tests',
      {
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'createFlowTest',
          summary: 'Add a conversation test to a flow',
          description:
            'A test is a conversation: what the first turn must do (`start`), then steps (a message sent, an outside event posted, the pending timer fired), each with what the bot\'s turn must do. ' +
            'The answers of the flow\'s calls outside are written in `answers`, by node, so a test never calls anything. A name another test of the flow has, or a flow with ' +
            `${CONVERSATION_TEST_LIMITS.perFlow} tests, answers 409.`,
          params: FlowParams,
          body: Type.Composite([ConversationTestBody], { examples: [example] }),
          response: { 201: EmptyBody, ...errorResponses(400, 401, 404, 409, 413, 415) },
        },
      },
      async (request, reply) => {
        const { id } = await saveConversationTest(testsContext(request), request.principal, request.params.id, undefined, request.body)
        return reply.status(201).header('location', `/v1/flows/${request.params.id}/tests/${id}`).send()
      },
    )

    app.get(
      '/flows/:id/tests/:testId',
      {
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'getFlowTest',
          summary: 'Read a conversation test',
          description: 'The test as written, with its dates.',
          params: TestParams,
          response: { 200: ConversationTest, ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => conversationTestOf(testsContext(request), request.principal, request.params.id, request.params.testId),
    )

    app.put(
      '/flows/:id/tests/:testId',
      {
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'replaceFlowTest',
          summary: 'Replace a conversation test',
          description: 'The test given replaces the test of that id whole; answers it as it is now.',
          params: TestParams,
          body: Type.Composite([ConversationTestBody], { examples: [example] }),
          response: { 200: ConversationTest, ...errorResponses(400, 401, 404, 409, 413, 415) },
        },
      },
      async (request) => saveConversationTest(testsContext(request), request.principal, request.params.id, request.params.testId, request.body),
    )

    app.delete(
      '/flows/:id/tests/:testId',
      {
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'deleteFlowTest',
          summary: 'Delete a conversation test',
          description: 'The test is gone from the flow; past runs are not kept.',
          params: TestParams,
          response: { 204: EmptyBody, ...errorResponses(400, 401, 404) },
        },
      },
      async (request, reply) => {
        await deleteConversationTest(testsContext(request), request.principal, request.params.id, request.params.testId)
        return reply.status(204).send()
      },
    )

    app.get(
      '/sessions/:sessionId/test',
      {
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'getSessionAsTest',
          summary: "A session's conversation as a conversation test, to edit and save with its flow",
          description:
            'What the user and the world did become the steps, every turn the bot made what its step expects (its messages word for word, what it set, where it waited), and the answers its calls got the test\'s `answers`. ' +
            'Save it with POST /v1/flows/{flowId}/tests, as it is or edited. The editor\'s token reaches preview sessions of its workspace.',
          params: Type.Object({ sessionId: Uuid }),
          response: { 200: Type.Object({ flowId: Uuid, test: ConversationTestBody }), ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => {
        const { sessionId } = request.params
        const { recorded, state } = await readSessionHistory(deps.store, request.principal.workspaceId, sessionId)
        if (request.principal.kind === 'editor' && state.previewDefinition === null) throw new NotFoundError(`session ${sessionId} not found`)
        const events = recorded.map((event) => ({ type: event.type, data: event.data }) as SessionEvent)
        return { flowId: state.flowId, test: testOfSession(`Session ${sessionId.slice(-8)}`, events) }
      },
    )

    app.post(
      '/flows/:id/test-runs',
      {
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'runFlowTests',
          summary: "Run a flow's conversation tests against its draft or a version",
          description:
            'Plays each test (those of `testIds`, else all) with the engine\'s interpreter against the published `version`, or the draft as it is now without one, on a fixed clock. ' +
            'Nothing is recorded, sent or called: the outside answers come from the tests. Answers every turn with what differs from what the test expects.',
          params: FlowParams,
          body: Type.Object(
            {
              version: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_INT32, description: 'a published version; the draft when absent' })),
              testIds: Type.Optional(Type.Array(Uuid, { minItems: 1, maxItems: CONVERSATION_TEST_LIMITS.perFlow, description: 'the tests to run; every test of the flow when absent' })),
            },
            { description: OPTIONAL_BODY, examples: [{}, { version: 2 }] },
          ),
          response: { 200: TestRun, ...errorResponses(400, 401, 404, 413, 415) },
        },
        preValidation: async (request) => {
          request.body ??= {}
        },
      },
      async (request) => runConversationTests({ ...testsContext(request), flows }, request.principal, request.params.id, request.body),
    )
  }
