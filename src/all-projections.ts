import { analyticsCardStaysProjection } from './projections/analytics-card-stays.js'
import { analyticsModelCallsProjection } from './projections/analytics-model-calls.js'
import { analyticsSessionsProjection } from './projections/analytics-sessions.js'
import { analyticsTransfersProjection } from './projections/analytics-transfers.js'
import { apiKeysProjection } from './projections/api-keys.js'
import { cardsProjection } from './projections/cards.js'
import { flowsProjection } from './projections/flows.js'
import { oauthClientsProjection } from './projections/oauth-clients.js'
import { organizationsProjection } from './projections/organizations.js'
import { pipelinesProjection } from './projections/pipelines.js'
import type { Projection } from './projections/projection.js'
import { sectorsProjection } from './projections/sectors.js'
import { sessionLogsProjection } from './projections/session-logs.js'
import { variablesProjection } from './projections/variables.js'
import { workspacesProjection } from './projections/workspaces.js'
import { webhookOutboxProjection } from './webhooks/outbox.js'

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
  analyticsModelCallsProjection,
]
