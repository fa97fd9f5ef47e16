import type { FastifyRequest } from 'fastify'
import type { CommandContext } from '../commands/context.js'
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
