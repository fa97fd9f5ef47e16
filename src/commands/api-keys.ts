import { createHash, randomBytes } from 'node:crypto'
import { apiKey, apiKeyStream, authorizeIssue, type ApiKey, type ApiKeyRecord, type ApiKeyRole, type KeyActor } from '../domain/api-key.js'
import { workspace, workspaceStream, type WorkspaceEvent } from '../domain/workspace.js'
import { BadRequestError, NotFoundError } from '../errors.js'
import { newId } from '../ids.js'
import { callbackUrlProblem, parseCidrs, resolvedCallbackProblem, type Resolver } from '../webhooks/callback-url.js'
import { awaitReadModels, type CommandContext } from './context.js'
import { handleCommand } from './handle.js'

export const API_KEY_PREFIX = 'wh_'

export const hashApiKey = (key: string): string => createHash('sha256').update(key).digest('hex')

export interface CallbackPolicy {
  /** Private ranges an operator opened for webhooks (`WEBHOOK_ALLOWED_PRIVATE_CIDRS`); none by default. */
  allowedPrivateCidrs?: readonly string[]
  /** Resolves callback host names; the system resolver by default (tests inject a fake DNS). */
  resolve?: Resolver
}

/**
 * The one check of a callback URL (or another URL the service calls, `field`) before it is stored:
 * 400 with the reason when refused. A host
 * name is refused when any address it resolves to is not allowed; one that does not resolve
 * within 2 s is accepted, since every delivery resolves and checks it again.
 */
export async function checkCallbackUrl(url: string, policy: CallbackPolicy, field = 'callbackUrl'): Promise<void> {
  const allowed = parseCidrs(policy.allowedPrivateCidrs ?? [])
  const problem = callbackUrlProblem(url, allowed, field) ?? (await resolvedCallbackProblem(url, allowed, policy.resolve, undefined, field))
  if (problem) throw new BadRequestError(problem)
}

export interface IssuedApiKey {
  apiKeyId: string
  /** Shown once: only its hash is kept. */
  apiKey: string
  /** Shown once: verifies webhook signatures. */
  signingSecret: string
}

const toRecord = (state: ApiKey): ApiKeyRecord => {
  if (state.status === 'none') throw new Error('an API key command left no key behind')
  const { apiKeyId: id, name, workspaceId, role, callbackUrl, keyPrefix, createdAt } = state
  return { id, name, workspaceId, role, callbackUrl, keyPrefix, createdAt }
}

async function issue(
  ctx: CommandContext,
  input: { organizationId: string; workspaceId: string; name: string; role: ApiKeyRole; callbackUrl: string | null },
  policy: CallbackPolicy,
): Promise<IssuedApiKey & { record: ApiKeyRecord }> {
  const { organizationId, workspaceId, name, role, callbackUrl } = input
  if (callbackUrl !== null) await checkCallbackUrl(callbackUrl, policy)
  const apiKeyId = newId()
  const key = `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`
  const signingSecret = `whsec_${randomBytes(32).toString('base64')}`
  const result = await handleCommand(ctx.store, apiKey, apiKeyStream(apiKeyId), {
    type: 'IssueApiKey',
    data: { apiKeyId, organizationId, workspaceId, name, role, callbackUrl, keyHash: hashApiKey(key), keyPrefix: key.slice(0, 10), signingSecret, now: ctx.now().toISOString() },
  }, { ...ctx.metadata, workspaceId })
  await awaitReadModels(ctx, result)
  return { apiKeyId, apiKey: key, signingSecret, record: toRecord(result.state) }
}

/** Issues a key on the operator's authority (bootstrap, CLI, tests). */
export async function issueApiKey(
  ctx: CommandContext,
  input: { organizationId: string; workspaceId: string; name: string; role: ApiKeyRole; callbackUrl: string | null },
  policy: CallbackPolicy = {},
): Promise<IssuedApiKey> {
  const { apiKeyId, apiKey: key, signingSecret } = await issue(ctx, input, policy)
  return { apiKeyId, apiKey: key, signingSecret }
}

/** The workspace's organization, from its own stream; undefined when there is no such workspace. */
async function organizationOf(ctx: CommandContext, workspaceId: string): Promise<string | undefined> {
  const recorded = await ctx.store.readStream(workspaceStream(workspaceId))
  const state = recorded.reduce((s, e) => workspace.evolve(s, { type: e.type, data: e.data } as WorkspaceEvent), workspace.initialState)
  return state.status === 'active' ? state.organizationId : undefined
}

/**
 * Issues a key for any workspace on the operator's authority (`flowd api-keys create`): the
 * operator stands above organizations, so only the workspace's existence is checked.
 */
export async function issueApiKeyForWorkspace(
  ctx: CommandContext,
  input: { workspaceId: string; name: string; role: ApiKeyRole; callbackUrl: string | null },
  policy: CallbackPolicy,
): Promise<ApiKeyRecord & { apiKey: string; signingSecret: string }> {
  const organizationId = await organizationOf(ctx, input.workspaceId)
  if (organizationId === undefined) throw new NotFoundError(`workspace ${input.workspaceId} not found`)
  const issued = await issue(ctx, { ...input, organizationId }, policy)
  return { ...issued.record, apiKey: issued.apiKey, signingSecret: issued.signingSecret }
}

/** Issues a key on behalf of another key, within what that key may reach. */
export async function createApiKey(
  ctx: CommandContext,
  by: KeyActor,
  input: { name: string; callbackUrl: string; workspaceId?: string; role: ApiKeyRole },
  policy: CallbackPolicy,
): Promise<ApiKeyRecord & { apiKey: string; signingSecret: string }> {
  const workspaceId = input.workspaceId ?? by.workspaceId
  const targetOrganizationId = workspaceId === by.workspaceId ? by.organizationId : await organizationOf(ctx, workspaceId)
  // From here on the target workspace is known to be in the caller's organization.
  authorizeIssue(by, { workspaceId, role: input.role }, targetOrganizationId)
  const issued = await issue(ctx, { organizationId: by.organizationId, workspaceId, name: input.name, role: input.role, callbackUrl: input.callbackUrl }, policy)
  return { ...issued.record, apiKey: issued.apiKey, signingSecret: issued.signingSecret }
}

/** Renames a key or moves its callback; unchanged values append nothing. */
export async function changeApiKey(
  ctx: CommandContext,
  apiKeyId: string,
  changes: { name?: string; callbackUrl?: string },
  options: CallbackPolicy & { by?: KeyActor },
): Promise<ApiKeyRecord> {
  if (changes.callbackUrl !== undefined) await checkCallbackUrl(changes.callbackUrl, options)
  const result = await handleCommand(ctx.store, apiKey, apiKeyStream(apiKeyId), {
    type: 'ChangeApiKey',
    data: { apiKeyId, ...changes, by: options.by, now: ctx.now().toISOString() },
  }, ctx.metadata)
  await awaitReadModels(ctx, result)
  return toRecord(result.state)
}

/**
 * Revokes a key. It keeps working for at most the authenticator's cache time (5 s by default) in
 * processes that saw it a moment ago.
 */
export async function revokeApiKey(ctx: CommandContext, apiKeyId: string, options: { by?: KeyActor } = {}): Promise<void> {
  const result = await handleCommand(ctx.store, apiKey, apiKeyStream(apiKeyId), {
    type: 'RevokeApiKey',
    data: { apiKeyId, by: options.by, now: ctx.now().toISOString() },
  }, ctx.metadata)
  await awaitReadModels(ctx, result)
}
