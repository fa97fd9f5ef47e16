import { createHash, randomBytes } from 'node:crypto'
import { apiKey, apiKeyStream, type ApiKeyRole } from '../domain/api-key.js'
import { organization, organizationStream } from '../domain/organization.js'
import { workspace, workspaceStream } from '../domain/workspace.js'
import { newId } from '../ids.js'
import { awaitReadModels, type CommandContext } from './context.js'
import { handleCommand } from './handle.js'

export const API_KEY_PREFIX = 'wh_'

export const hashApiKey = (key: string): string => createHash('sha256').update(key).digest('hex')

export async function createOrganization(ctx: CommandContext, input: { name: string }): Promise<{ organizationId: string }> {
  const organizationId = newId()
  const result = await handleCommand(ctx.store, organization, organizationStream(organizationId), {
    type: 'CreateOrganization',
    data: { organizationId, name: input.name, now: ctx.now().toISOString() },
  }, ctx.metadata)
  await awaitReadModels(ctx, result)
  return { organizationId }
}

export async function createWorkspace(
  ctx: CommandContext,
  input: { organizationId: string; name: string; timezone?: string | null },
): Promise<{ workspaceId: string }> {
  const workspaceId = newId()
  const result = await handleCommand(ctx.store, workspace, workspaceStream(workspaceId), {
    type: 'CreateWorkspace',
    data: { workspaceId, organizationId: input.organizationId, name: input.name, timezone: input.timezone ?? null, now: ctx.now().toISOString() },
  }, { ...ctx.metadata, workspaceId })
  await awaitReadModels(ctx, result)
  return { workspaceId }
}

export interface IssuedApiKey {
  apiKeyId: string
  /** Shown once: only its hash is kept. */
  apiKey: string
  /** Shown once: verifies webhook signatures. */
  signingSecret: string
}

export async function issueApiKey(
  ctx: CommandContext,
  input: { organizationId: string; workspaceId: string; name: string; role: ApiKeyRole; callbackUrl: string | null },
): Promise<IssuedApiKey> {
  const apiKeyId = newId()
  const key = `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`
  const signingSecret = `whsec_${randomBytes(32).toString('base64')}`
  const result = await handleCommand(ctx.store, apiKey, apiKeyStream(apiKeyId), {
    type: 'IssueApiKey',
    data: { apiKeyId, ...input, keyHash: hashApiKey(key), keyPrefix: key.slice(0, 10), signingSecret, now: ctx.now().toISOString() },
  }, { ...ctx.metadata, workspaceId: input.workspaceId })
  await awaitReadModels(ctx, result)
  return { apiKeyId, apiKey: key, signingSecret }
}

export async function revokeApiKey(ctx: CommandContext, apiKeyId: string): Promise<void> {
  const result = await handleCommand(ctx.store, apiKey, apiKeyStream(apiKeyId), {
    type: 'RevokeApiKey',
    data: { apiKeyId, now: ctx.now().toISOString() },
  }, ctx.metadata)
  await awaitReadModels(ctx, result)
}

export interface Bootstrapped extends IssuedApiKey {
  organizationId: string
  workspaceId: string
}

/** The first organization, its first workspace and an organization-admin key. */
export async function bootstrap(
  ctx: CommandContext,
  input: { organization: string; workspace: string; callbackUrl: string | null },
): Promise<Bootstrapped> {
  const { organizationId } = await createOrganization(ctx, { name: input.organization })
  const { workspaceId } = await createWorkspace(ctx, { organizationId, name: input.workspace })
  const key = await issueApiKey(ctx, {
    organizationId,
    workspaceId,
    name: 'bootstrap',
    role: 'organization-admin',
    callbackUrl: input.callbackUrl,
  })
  return { organizationId, workspaceId, ...key }
}
