import type { Generated } from 'kysely'
import type { Timestamp } from './columns.js'

/** A data key of a workspace secret, wrapped by a master key (src/secrets/keyring.ts). */
export interface SecretKeysTable {
  id: string
  workspace_id: string
  name: string
  /** The fingerprint of the master key that wrapped it. */
  master_key_id: string
  wrapped_key: string
  /** The secrets stream's version whose SecretSet uses it; null until that event is appended. */
  set_version: number | null
  created_at: Generated<Timestamp>
}
