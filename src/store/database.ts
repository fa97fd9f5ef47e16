import type { ColumnType, Generated, Insertable, Kysely, Selectable, Transaction } from 'kysely'
import type { CardValues } from '../domain/card.js'
import type { Field, Stage } from '../domain/pipeline.js'

/** int8 arrives as a string from `pg` and as a number from PGlite; see {@link toBigInt}. */
type Int8 = ColumnType<string | number | bigint, string | number | bigint, string | number | bigint>
type Timestamp = ColumnType<Date, Date | string, Date | string>

export interface EventsTable {
  global_position: ColumnType<string | number, never, never>
  transaction_id: ColumnType<string | number, never, never>
  event_id: string
  stream_id: string
  stream_revision: Int8
  event_type: string
  data: ColumnType<unknown, string, string>
  metadata: ColumnType<Record<string, unknown>, string, string>
  created_at: ColumnType<Date, never, never>
}

export interface StreamsTable {
  stream_id: string
  revision: Int8
}

export interface ProjectionCheckpointsTable {
  projection: string
  position_commit: Int8
  position_prepare: Int8
  updated_at: Generated<Timestamp>
}

/** A stream a log processor stopped at after repeated failures on one of its events (parked-streams.ts). */
export interface ParkedStreamsTable {
  processor: string
  stream: string
  event_id: string
  event_type: string
  position_commit: Int8
  position_prepare: Int8
  reason: string
  failures: number
  parked_at: Generated<Timestamp>
}

export interface OrganizationsTable {
  id: string
  name: string
  created_at: Timestamp
}

export interface WorkspacesTable {
  id: string
  organization_id: string
  name: string
  timezone: string | null
  created_at: Timestamp
}

export interface ApiKeysTable {
  id: string
  organization_id: string
  workspace_id: string
  name: string
  role: string
  key_hash: string
  key_prefix: string
  callback_url: string | null
  signing_secret: string
  created_at: Timestamp
  revoked_at: Timestamp | null
}

export interface OAuthClientsTable {
  id: string
  organization_id: string
  workspace_id: string
  name: string
  secret_hash: string
  created_at: Timestamp
  revoked_at: Timestamp | null
}

export interface SectorsTable {
  id: string
  workspace_id: string
  organization_id: string
  name: string
  created_at: Timestamp
  updated_at: Timestamp
}

/** Written by the sector commands, not a projection (src/commands/sector-names.ts). */
export interface SectorNamesTable {
  workspace_id: string
  name_key: string
  sector_id: string
  reserved_at: Timestamp
}

/** One row: the partition count the engine's checkpoints are made for (src/engine/partitions.ts). */
export interface EnginePartitionCountTable {
  only_row: Generated<boolean>
  partitions: number
  recorded_at: Generated<Timestamp>
}

export interface FlowsTable {
  id: string
  workspace_id: string
  organization_id: string
  name: string
  draft: ColumnType<unknown, string, string>
  draft_version: number
  published_version: number
  created_at: Timestamp
  updated_at: Timestamp
}

export interface FlowVersionsTable {
  flow_id: string
  version: number
  definition: ColumnType<unknown, string, string>
  published_at: Timestamp
}

export interface VariablesTable {
  id: string
  workspace_id: string
  name: string
  type: string
  description: string | null
  /** JSON of the default value; SQL null when there is none. */
  default_value: ColumnType<unknown, string | null, string | null>
  created_at: Timestamp
  updated_at: Timestamp
}

export interface SessionLogsTable {
  id: string
  workspace_id: string
  organization_id: string
  flow_id: string
  flow_version: number
  external_id: string | null
  status: string
  warnings: number
  started_at: Timestamp
  expires_at: Timestamp
  finished_at: Timestamp | null
}

export interface KanbanPipelinesTable {
  id: string
  workspace_id: string
  name: string
  stages: ColumnType<Stage[], string, string>
  fields: ColumnType<Field[], string, string>
  created_at: Timestamp
  updated_at: Timestamp
}

export interface KanbanCardsTable {
  id: string
  pipeline_id: string
  workspace_id: string
  stage_id: string
  session_id: string | null
  tags: string[]
  field_values: ColumnType<CardValues, string, string>
  /** Generated from `field_values`; what `q` searches. */
  search_text: ColumnType<string, never, never>
  created_at: Timestamp
  moved_at: Timestamp
}

/** Kept by triggers of migration 0013 beside `session_logs`: rows per workspace and status. */
export interface SessionLogCountsTable {
  organization_id: string
  workspace_id: string
  status: string
  n: ColumnType<string | number, never, never>
}

/** As `session_log_counts`, per UTC day of `started_at`. */
export interface SessionLogDayCountsTable {
  organization_id: string
  day: ColumnType<Date, never, never>
  workspace_id: string
  status: string
  n: ColumnType<string | number, never, never>
}

/** Kept by triggers of migration 0013 beside `kanban_cards`: cards per stage and tag ('' = every card). */
export interface KanbanCardCountsTable {
  pipeline_id: string
  stage_id: string
  tag: string
  n: ColumnType<string | number, never, never>
}

/** As `kanban_card_counts`: the sum of each field's number values. */
export interface KanbanCardSumsTable {
  pipeline_id: string
  stage_id: string
  tag: string
  field_id: string
  total: ColumnType<string | number, never, never>
}

export interface WebhookSessionsTable {
  session_id: string
  organization_id: string
  workspace_id: string
  api_key_id: string
  callback_url: string | null
  active: boolean
}

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'dead', 'skipped'] as const
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number]

export interface WebhookDeliveriesTable {
  /** The `webhook-id`: derived from the source event, the same on every attempt. */
  id: string
  organization_id: string
  workspace_id: string
  session_id: string
  message_id: string
  api_key_id: string
  callback_url: string | null
  /** The exact JSON that is signed and sent. */
  body: string
  event_ids: ColumnType<string[], string, string>
  /** Global position of the source event: the order of a session's deliveries. */
  source_commit: Int8
  source_prepare: Int8
  status: DeliveryStatus
  attempt_count: Generated<number>
  /** Attempts since the delivery was (re)queued: the place in the retry schedule. */
  round_attempts: Generated<number>
  /** Null on a fresh row: due the first delay of the schedule after `created_at`. */
  next_attempt_at: Timestamp | null
  lease_token: string | null
  lease_until: Timestamp | null
  last_error: string | null
  delivered_at: Timestamp | null
  created_at: Timestamp
  /** The callback URL's origin (lower case): with the workspace, the destination whose fair share the delivery takes. */
  destination: string | null
}

export const DESTINATION_STATES = ['healthy', 'failing'] as const
export type DestinationState = (typeof DESTINATION_STATES)[number]

/** A destination that failed at least once: its health, shared by every dispatcher. */
export interface WebhookDestinationsTable {
  workspace_id: string
  destination: string
  organization_id: string
  state: DestinationState
  consecutive_failures: number
  failing_since: Timestamp | null
  last_error: string | null
  last_failure_at: Timestamp | null
  /** Probes that failed since the destination became failing: the place in the probe schedule. */
  probes: number
  next_probe_at: Timestamp | null
  /** Set while a probe attempt is in flight: no other attempt goes to a failing destination meanwhile. */
  probe_until: Timestamp | null
  updated_at: Timestamp
}

export interface WebhookAttemptsTable {
  delivery_id: string
  attempt: number
  attempted_at: Timestamp
  status_code: number | null
  error: string | null
  duration_ms: number
  response_body: string | null
  response_truncated: boolean
}

/** Embedded-editor credentials (migration 0011); tokens only as SHA-256 hex. */
export interface EditorOneTimeTokensTable {
  token_hash: string
  client_id: string
  organization_id: string
  workspace_id: string
  created_at: Timestamp
  expires_at: Timestamp
  used_at: Timestamp | null
}

export interface DashboardSessionsTable {
  id: string
  token_hash: string
  api_key_hash: string
  created_at: Timestamp
  expires_at: Timestamp
  ended_at: Timestamp | null
}

export interface DashboardSignInLinksTable {
  token_hash: string
  api_key_hash: string
  created_at: Timestamp
  expires_at: Timestamp
  used_at: Timestamp | null
}

export interface EditorTokenFamiliesTable {
  id: string
  client_id: string
  organization_id: string
  workspace_id: string
  created_at: Timestamp
  expires_at: Timestamp
  revoked_at: Timestamp | null
}

export interface EditorRefreshTokensTable {
  token_hash: string
  family_id: string
  created_at: Timestamp
  expires_at: Timestamp
  used_at: Timestamp | null
}

/** Analytics read models (migration 0015; docs/analytics.md): each session once, with the last node it reached. */
export interface AnalyticsSessionsTable {
  session_id: string
  organization_id: string
  workspace_id: string
  flow_id: string
  flow_version: number
  status: string
  started_at: Timestamp
  finished_at: Timestamp | null
  last_node_id: string | null
  turns: number
}

/** Each node a session reached, once per session. */
export interface AnalyticsSessionNodesTable {
  session_id: string
  node_id: string
  flow_id: string
  flow_version: number
  workspace_id: string
  session_started_at: Timestamp
  first_reached_at: Timestamp
  visits: number
  answered_at: Timestamp | null
}

/** Each transfer a turn asked for. */
export interface AnalyticsTransfersTable {
  session_id: string
  timestamp_micros: ColumnType<string, string | number | bigint, never>
  target_type: string
  target_id: string
  node_id: string | null
  transferred_at: Timestamp
}

/** Each stay of a card in a stage. */
export interface AnalyticsCardStaysTable {
  card_id: string
  entered_revision: ColumnType<string, string | number | bigint, never>
  pipeline_id: string
  workspace_id: string
  stage_id: string
  entered_at: Timestamp
  left_at: Timestamp | null
  left_by: string | null
}

export interface Database {
  events: EventsTable
  streams: StreamsTable
  projection_checkpoints: ProjectionCheckpointsTable
  parked_streams: ParkedStreamsTable
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
}

export type Db = Kysely<Database>
/** A connection or an open transaction: query functions take either. */
export type DbOrTrx = Kysely<Database> | Transaction<Database>

export type Workspace = Selectable<WorkspacesTable>
export type NewWorkspace = Insertable<WorkspacesTable>
export type ApiKeyRow = Selectable<ApiKeysTable>

export const toBigInt = (value: string | number | bigint): bigint => (typeof value === 'bigint' ? value : BigInt(value))

/**
 * Runs `read` on one snapshot of the database: in a repeatable-read transaction of its own, or in
 * the transaction `db` already is.
 */
export function inOneSnapshot<T>(db: DbOrTrx, read: (trx: DbOrTrx) => Promise<T>): Promise<T> {
  if (db.isTransaction) return read(db)
  return (db as Kysely<Database>).transaction().setIsolationLevel('repeatable read').execute(read)
}
