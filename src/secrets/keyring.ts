import type { Kysely } from 'kysely'
import { newId } from '../ids.js'
import type { Database } from '../store/database.js'
import { newDataKey, SealBrokenError, unwrapKey, wrapKey, type MasterKey } from './cipher.js'
import type { MasterKeys } from './master-keys.js'

/** A data key wrapped by a master key this process does not hold: the processes disagree on `SECRETS_KEY`. */
export class MasterKeyMissingError extends Error {
  override readonly name = 'MasterKeyMissingError'
}

/** What `rewrap` did: keys moved to the current master key, and those it could not move. */
export interface RewrapReport {
  masterKeyId: string
  rewrapped: number
  /** Keys wrapped by neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS, by master key fingerprint. */
  unknown: { masterKeyId: string; keys: number }[]
  /** Ids of keys whose wrapping did not open with the master key it names (a changed row). */
  broken: string[]
}

const REWRAP_BATCH = 500

/**
 * The data keys of workspace secrets, in Postgres (`secret_keys`), each wrapped by a master key.
 * A key is stored before its ciphertext exists and deleted (shredded) once no live value uses it.
 */
export class SecretKeyring {
  readonly #db: Kysely<Database>
  readonly #keys: MasterKeys

  constructor(db: Kysely<Database>, keys: MasterKeys) {
    this.#db = db
    this.#keys = keys
  }

  /** The fingerprint of the master key that wraps new data keys. */
  get masterKeyId(): string {
    return this.#keys.current.id
  }

  /** A fresh data key for a value of `name`, stored wrapped before anything is sealed with it. */
  async issue(workspaceId: string, name: string): Promise<{ keyId: string; key: Buffer }> {
    const keyId = newId()
    const key = newDataKey()
    const { current } = this.#keys
    await this.#db
      .insertInto('secret_keys')
      .values({ id: keyId, workspace_id: workspaceId, name, master_key_id: current.id, wrapped_key: wrapKey(current, keyId, key), set_version: null })
      .execute()
    return { keyId, key }
  }

  /**
   * After an event at `version` of the secrets stream about `name`: records that it uses `usedKeyId`
   * (a SecretSet), then shreds the key it took out of use and those of the name's earlier values
   * (left by a writer that stopped between its append and this). Keys of writes still in flight
   * (no version yet) stay.
   */
  async settle(workspaceId: string, name: string, written: { version: number; usedKeyId?: string; retiredKeyId: string | null }): Promise<void> {
    const { version, usedKeyId, retiredKeyId } = written
    if (usedKeyId !== undefined) await this.#db.updateTable('secret_keys').set({ set_version: version }).where('id', '=', usedKeyId).execute()
    await this.#db
      .deleteFrom('secret_keys')
      .where('workspace_id', '=', workspaceId)
      .where('name', '=', name)
      .where((eb) => eb.or([eb('set_version', '<', version), ...(retiredKeyId === null ? [] : [eb('id', '=', retiredKeyId)])]))
      .execute()
  }

  /** Deletes these keys: what they sealed can no longer be read. */
  async shred(workspaceId: string, keyIds: readonly string[]): Promise<void> {
    if (keyIds.length === 0) return
    await this.#db.deleteFrom('secret_keys').where('workspace_id', '=', workspaceId).where('id', 'in', keyIds).execute()
  }

  /**
   * The data keys of these ids that are still stored, unwrapped; a shredded one is absent. Throws
   * {@link MasterKeyMissingError} for a key wrapped by a master key this process lacks.
   */
  async unwrap(workspaceId: string, keyIds: readonly string[]): Promise<Map<string, Buffer>> {
    const keys = new Map<string, Buffer>()
    if (keyIds.length === 0) return keys
    const rows = await this.#db
      .selectFrom('secret_keys')
      .select(['id', 'master_key_id', 'wrapped_key'])
      .where('workspace_id', '=', workspaceId)
      .where('id', 'in', keyIds)
      .execute()
    for (const row of rows) keys.set(row.id, unwrapKey(this.#master(row.master_key_id), row.id, row.wrapped_key))
    return keys
  }

  /**
   * Re-wraps every data key wrapped by the previous master key with the current one, a batch at a
   * time; each row changes alone, so the service may run meanwhile (it unwraps with either key).
   */
  async rewrap(): Promise<RewrapReport> {
    const { current, previous } = this.#keys
    let rewrapped = 0
    const broken: string[] = []
    for (let more = true; previous && more; ) {
      let query = this.#db.selectFrom('secret_keys').select(['id', 'wrapped_key']).where('master_key_id', '=', previous.id).orderBy('id').limit(REWRAP_BATCH)
      if (broken.length) query = query.where('id', 'not in', broken)
      const rows = await query.execute()
      more = rows.length === REWRAP_BATCH
      for (const row of rows) {
        let key: Buffer
        try {
          key = unwrapKey(previous, row.id, row.wrapped_key)
        } catch (error) {
          if (!(error instanceof SealBrokenError)) throw error
          broken.push(row.id)
          continue
        }
        const { numUpdatedRows } = await this.#db
          .updateTable('secret_keys')
          .set({ master_key_id: current.id, wrapped_key: wrapKey(current, row.id, key) })
          .where('id', '=', row.id)
          .where('master_key_id', '=', previous.id)
          .executeTakeFirst()
        rewrapped += Number(numUpdatedRows)
      }
    }
    const known = previous ? [current.id, previous.id] : [current.id]
    const others = await this.#db
      .selectFrom('secret_keys')
      .select(['master_key_id', (eb) => eb.fn.countAll<string | number>().as('keys')])
      .where('master_key_id', 'not in', known)
      .groupBy('master_key_id')
      .orderBy('master_key_id')
      .execute()
    return { masterKeyId: current.id, rewrapped, unknown: others.map((row) => ({ masterKeyId: row.master_key_id, keys: Number(row.keys) })), broken }
  }

  #master(id: string): MasterKey {
    const { current, previous } = this.#keys
    if (id === current.id) return current
    if (id === previous?.id) return previous
    throw new MasterKeyMissingError(
      `a secret's data key is wrapped by master key ${id}, and this process has ${previous ? `${current.id} and ${previous.id}` : current.id}: give every process the same SECRETS_KEY (and, while keys are re-wrapped, SECRETS_KEY_PREVIOUS)`,
    )
  }
}
