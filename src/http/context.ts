import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { CommandContext } from '../commands/context.js'
import { revealSecrets } from '../commands/secrets.js'
import type { OutsideCallSettings } from '../engine/outside-calls.js'
import { createDeliveryAgent } from '../webhooks/agent.js'
import type { AppDeps } from './app.js'

/** The command context of a request: its caller (API key or editor client) as the actor, its id as the correlation id. */
export const commandContext = (deps: AppDeps, request: FastifyRequest): CommandContext => ({
  store: deps.store,
  readModels: deps.readModels,
  logger: request.log,
  now: deps.now,
  metadata: {
    actor: request.principal.actor,
    workspaceId: request.principal.workspaceId,
    correlationId: request.id,
  },
})

/**
 * What a call the API makes for a person needs (an HTTP request tried from the editor, an AI
 * connection's check): an agent with the same address checks as a flow's calls and webhooks (the
 * operator's private ranges and CA), closed with `app`, and the workspace's secrets.
 */
export function outsideCallSettings(app: FastifyInstance, deps: AppDeps): Pick<OutsideCallSettings, 'agent' | 'revealSecrets'> {
  const agent = createDeliveryAgent({ allowedPrivateCidrs: deps.config.webhookAllowedPrivateCidrs, caFile: deps.config.webhookCaFile, lookup: deps.resolveHost })
  app.addHook('onClose', () => agent.close())
  return { agent, revealSecrets: (workspaceId, names) => revealSecrets({ store: deps.store, secrets: deps.secrets }, workspaceId, names) }
}
