import type { AiConnectionSettings } from '../domain/ai-connection.js'
import { connectionCheck, modelsRequest, needsPing, pingRequest, type ConnectionCheck } from '../domain/chat-completions.js'
import type { Logger } from '../logger.js'
import { makeCall, type OutsideCallSettings } from './outside-calls.js'

/**
 * Tests a connection as a flow's call would go: through the same address checks and agent, with
 * the key read from its secret. It asks for the endpoint's model list, and only when the endpoint
 * has none, makes one call of a single token with the connection's model. Nothing is recorded.
 */
export async function checkAiConnection(
  settings: Pick<OutsideCallSettings, 'agent' | 'revealSecrets'>,
  workspaceId: string,
  connection: Pick<AiConnectionSettings, 'baseUrl' | 'apiKeySecret' | 'model' | 'headers'>,
  logger: Pick<Logger, 'error'>,
): Promise<ConnectionCheck & { durationMs: number }> {
  const job = { workspaceId, nodeId: 'connection-check' }
  const models = await makeCall(settings, { ...job, index: 0, request: modelsRequest(connection) }, logger)
  const ping = needsPing(models.answer) ? await makeCall(settings, { ...job, index: 1, request: pingRequest(connection) }, logger) : undefined
  return { ...connectionCheck(connection, models.answer, ping?.answer), durationMs: models.durationMs + (ping?.durationMs ?? 0) }
}
