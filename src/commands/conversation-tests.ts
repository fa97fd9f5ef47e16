import { Value } from '@sinclair/typebox/value'
import { ConversationTestBody, conversationTests, conversationTestsStream, testWithId, type ConversationTest } from '../domain/conversation-test.js'
import { BadRequestError, NotFoundError } from '../errors.js'
import type { EventStore } from '../eventstore/port.js'
import { foldStream } from '../eventstore/stream-state.js'
import { newId } from '../ids.js'
import { findFlow } from '../projections/flows.js'
import type { DbOrTrx } from '../store/database.js'
import type { CommandContext } from './context.js'
import { handleCommand } from './handle.js'
import type { Scope } from './sectors.js'

/** What the tests of a flow take: the event store, and the flows' read model to find the flow in the caller's workspace. */
export type TestsContext = CommandContext & { db: DbOrTrx }

/** The flow in the caller's workspace; 404 otherwise (another workspace's included). */
export async function flowOf(ctx: { db: DbOrTrx }, scope: Scope, flowId: string) {
  const flow = await findFlow(ctx.db, { workspaceId: scope.workspaceId, id: flowId })
  if (!flow) throw new NotFoundError(`flow ${flowId} not found`)
  return flow
}

export const testsOf = async (store: EventStore, flowId: string) => (await foldStream(store, conversationTests, conversationTestsStream(flowId))).state

/** The test as its schema names it (properties it does not name left out, at every depth), its name trimmed. */
const checkedBody = (body: ConversationTestBody): ConversationTestBody => {
  const name = body.name.trim()
  if (!name) throw new BadRequestError('name must not be blank')
  const named = Value.Clean(ConversationTestBody, Value.Clone(body)) as ConversationTestBody
  return { ...named, name }
}

/** Creates a test of the flow (no `testId`), or replaces the flow's test of that id. */
export async function saveConversationTest(ctx: TestsContext, scope: Scope, flowId: string, testId: string | undefined, body: ConversationTestBody): Promise<ConversationTest> {
  await flowOf(ctx, scope, flowId)
  if (testId !== undefined && !testWithId(await testsOf(ctx.store, flowId), testId)) throw new NotFoundError(`no test ${testId} in this flow`)
  const id = testId ?? newId()
  const result = await handleCommand(ctx.store, conversationTests, conversationTestsStream(flowId), {
    type: 'SaveConversationTest',
    data: { flowId, workspaceId: scope.workspaceId, testId: id, test: checkedBody(body), now: ctx.now().toISOString() },
  }, ctx.metadata)
  return testWithId(result.state, id)!
}

export async function deleteConversationTest(ctx: TestsContext, scope: Scope, flowId: string, testId: string): Promise<void> {
  await flowOf(ctx, scope, flowId)
  await handleCommand(ctx.store, conversationTests, conversationTestsStream(flowId), {
    type: 'DeleteConversationTest',
    data: { flowId, workspaceId: scope.workspaceId, testId, now: ctx.now().toISOString() },
  }, ctx.metadata)
}

/** The flow's tests in name order (then id), a page of them. */
export async function listConversationTests(ctx: TestsContext, scope: Scope, flowId: string, paging: { page: number; size: number }): Promise<{ content: ConversationTest[]; totalElements: number }> {
  await flowOf(ctx, scope, flowId)
  const all = Object.values((await testsOf(ctx.store, flowId)).byId).sort((a, b) => a.name.localeCompare(b.name, 'en') || (a.id < b.id ? -1 : 1))
  return { content: all.slice(paging.page * paging.size, (paging.page + 1) * paging.size), totalElements: all.length }
}

export async function conversationTestOf(ctx: TestsContext, scope: Scope, flowId: string, testId: string): Promise<ConversationTest> {
  await flowOf(ctx, scope, flowId)
  const test = testWithId(await testsOf(ctx.store, flowId), testId)
  if (!test) throw new NotFoundError(`no test ${testId} in this flow`)
  return test
}
