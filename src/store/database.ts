import type { Kysely, Transaction } from 'kysely'
import type { AnalyticsCardStaysTable } from './tables/analytics-card-stays.js'
import type { AnalyticsModelCallsTable } from './tables/analytics-model-calls.js'
import type { FlowReplaysTable } from './tables/flow-replays.js'
import type { FlowReleasesTable } from './tables/flow-releases.js'
import type { AnalyticsSessionNodesTable } from './tables/analytics-session-nodes.js'
import type { AnalyticsSessionsTable } from './tables/analytics-sessions.js'
import type { AnalyticsTransfersTable } from './tables/analytics-transfers.js'
import type { ApiKeysTable } from './tables/api-keys.js'
import type { DashboardSessionsTable } from './tables/dashboard-sessions.js'
import type { DashboardSignInLinksTable } from './tables/dashboard-sign-in-links.js'
import type { EditorOneTimeTokensTable } from './tables/editor-one-time-tokens.js'
import type { EditorRefreshTokensTable } from './tables/editor-refresh-tokens.js'
import type { EditorTokenFamiliesTable } from './tables/editor-token-families.js'
import type { EnginePartitionCountTable } from './tables/engine-partition-count.js'
import type { EventsTable } from './tables/events.js'
import type { FlowVersionsTable } from './tables/flow-versions.js'
import type { FlowsTable } from './tables/flows.js'
import type { KanbanCardCountsTable } from './tables/kanban-card-counts.js'
import type { KanbanCardSumsTable } from './tables/kanban-card-sums.js'
import type { KanbanCardsTable } from './tables/kanban-cards.js'
import type { KanbanPipelinesTable } from './tables/kanban-pipelines.js'
import type { OAuthClientsTable } from './tables/oauth-clients.js'
import type { OrganizationsTable } from './tables/organizations.js'
import type { ParkedStreamsTable } from './tables/parked-streams.js'
import type { PendingCallsTable, SessionTimersTable } from './tables/engine-waits.js'
import type { ProjectionCheckpointsTable } from './tables/projection-checkpoints.js'
import type { SecretKeysTable } from './tables/secret-keys.js'
import type { SectorNamesTable } from './tables/sector-names.js'
import type { SectorsTable } from './tables/sectors.js'
import type { SessionLogCountsTable } from './tables/session-log-counts.js'
import type { SessionLogDayCountsTable } from './tables/session-log-day-counts.js'
import type { SessionLogsTable } from './tables/session-logs.js'
import type { StreamsTable } from './tables/streams.js'
import type { VariablesTable } from './tables/variables.js'
import type { WebhookAttemptsTable } from './tables/webhook-attempts.js'
import type { WebhookDeliveriesTable } from './tables/webhook-deliveries.js'
import type { WebhookDestinationsTable } from './tables/webhook-destinations.js'
import type { WebhookSessionsTable } from './tables/webhook-sessions.js'
import type { WorkspacesTable } from './tables/workspaces.js'

/** Every table by its name in SQL, each typed in its own file of `tables/` (`preview_session_logs` has the columns of `session_logs`). */
export interface Database {
  events: EventsTable
  streams: StreamsTable
  projection_checkpoints: ProjectionCheckpointsTable
  parked_streams: ParkedStreamsTable
  pending_calls: PendingCallsTable
  session_timers: SessionTimersTable
  organizations: OrganizationsTable
  workspaces: WorkspacesTable
  api_keys: ApiKeysTable
  oauth_clients: OAuthClientsTable
  sectors: SectorsTable
  sector_names: SectorNamesTable
  engine_partition_count: EnginePartitionCountTable
  flows: FlowsTable
  flow_versions: FlowVersionsTable
  variables: VariablesTable
  secret_keys: SecretKeysTable
  kanban_pipelines: KanbanPipelinesTable
  kanban_cards: KanbanCardsTable
  session_logs: SessionLogsTable
  preview_session_logs: SessionLogsTable
  session_log_counts: SessionLogCountsTable
  session_log_day_counts: SessionLogDayCountsTable
  kanban_card_counts: KanbanCardCountsTable
  kanban_card_sums: KanbanCardSumsTable
  webhook_sessions: WebhookSessionsTable
  webhook_deliveries: WebhookDeliveriesTable
  webhook_attempts: WebhookAttemptsTable
  webhook_destinations: WebhookDestinationsTable
  editor_one_time_tokens: EditorOneTimeTokensTable
  editor_token_families: EditorTokenFamiliesTable
  editor_refresh_tokens: EditorRefreshTokensTable
  dashboard_sessions: DashboardSessionsTable
  dashboard_sign_in_links: DashboardSignInLinksTable
  analytics_sessions: AnalyticsSessionsTable
  analytics_session_nodes: AnalyticsSessionNodesTable
  analytics_transfers: AnalyticsTransfersTable
  analytics_card_stays: AnalyticsCardStaysTable
  analytics_model_calls: AnalyticsModelCallsTable
  flow_replays: FlowReplaysTable
  flow_releases: FlowReleasesTable
}

export type Db = Kysely<Database>
/** A connection or an open transaction: query functions take either. */
export type DbOrTrx = Kysely<Database> | Transaction<Database>

export const toBigInt = (value: string | number | bigint): bigint => (typeof value === 'bigint' ? value : BigInt(value))

/**
 * Runs `read` on one snapshot of the database: in a repeatable-read transaction of its own, or in
 * the transaction `db` already is.
 */
export function inOneSnapshot<T>(db: DbOrTrx, read: (trx: DbOrTrx) => Promise<T>): Promise<T> {
  if (db.isTransaction) return read(db)
  return (db as Kysely<Database>).transaction().setIsolationLevel('repeatable read').execute(read)
}
