import { organization, organizationStream } from '../domain/organization.js'
import { workspace, workspaceStream } from '../domain/workspace.js'
import { newId } from '../ids.js'
import { checkCallbackUrl, issueApiKey, type CallbackPolicy, type IssuedApiKey } from './api-keys.js'
import { awaitReadModels, type CommandContext } from './context.js'
import { handleCommand } from './handle.js'

// For callers written before the key commands moved to ./api-keys.js; import them from there.
export { issueApiKey, revokeApiKey } from './api-keys.js'

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

/** Renames a workspace of the caller's organization or changes its time zone (null: UTC); what is left out stays. */
export async function changeWorkspace(
  ctx: CommandContext,
  input: { workspaceId: string; organizationId: string; name?: string; timezone?: string | null },
): Promise<void> {
  const result = await handleCommand(ctx.store, workspace, workspaceStream(input.workspaceId), {
    type: 'ChangeWorkspace',
    data: { ...input, now: ctx.now().toISOString() },
  }, { ...ctx.metadata, workspaceId: input.workspaceId })
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
  policy: CallbackPolicy = {},
): Promise<Bootstrapped> {
  // Refused before anything is created, so a bad URL leaves no organization behind.
  if (input.callbackUrl !== null) await checkCallbackUrl(input.callbackUrl, policy)
  const { organizationId } = await createOrganization(ctx, { name: input.organization })
  const { workspaceId } = await createWorkspace(ctx, { organizationId, name: input.workspace })
  const key = await issueApiKey(ctx, {
    organizationId,
    workspaceId,
    name: 'bootstrap',
    role: 'organization-admin',
    callbackUrl: input.callbackUrl,
  }, policy)
  return { organizationId, workspaceId, ...key }
}
