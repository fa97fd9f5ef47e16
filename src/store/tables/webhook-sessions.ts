export interface WebhookSessionsTable {
  session_id: string
  organization_id: string
  workspace_id: string
  api_key_id: string
  callback_url: string | null
  active: boolean
}
