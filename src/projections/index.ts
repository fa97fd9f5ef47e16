import { analyticsCardStaysProjection } from './analytics-card-stays.js'
import { analyticsSessionsProjection } from './analytics-sessions.js'
import { analyticsTransfersProjection } from './analytics-transfers.js'
import { apiKeysProjection } from './api-keys.js'
import { cardsProjection } from './cards.js'
import { flowsProjection } from './flows.js'
import { oauthClientsProjection } from './oauth-clients.js'
import { organizationsProjection } from './organizations.js'
import { pipelinesProjection } from './pipelines.js'
import type { Projection } from './projection.js'
import { sectorsProjection } from './sectors.js'
import { sessionLogsProjection } from './session-logs.js'
import { variablesProjection } from './variables.js'
import { workspacesProjection } from './workspaces.js'
import { webhookOutboxProjection } from '../webhooks/outbox.js'

/** Every read model the service keeps, and the webhook outbox. */
export const allProjections: readonly Projection[] = [
  organizationsProjection,
  workspacesProjection,
  apiKeysProjection,
  oauthClientsProjection,
  sectorsProjection,
  flowsProjection,
  variablesProjection,
  sessionLogsProjection,
  pipelinesProjection,
  cardsProjection,
  webhookOutboxProjection,
  analyticsSessionsProjection,
  analyticsTransfersProjection,
  analyticsCardStaysProjection,
]
