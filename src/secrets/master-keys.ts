import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { decodeSecretsKey, type Config } from '../config.js'
import { KEY_BYTES, masterKey, type MasterKey } from './cipher.js'
import { keyFileText } from './key-file.js'

export const SECRETS_KEY_FILE = 'secrets-key'

/** The master keys of this process: the one that wraps new data keys, and the one before a rotation. */
export interface MasterKeys {
  current: MasterKey
  /** `SECRETS_KEY_PREVIOUS`: still unwraps the data keys not re-wrapped yet. */
  previous: MasterKey | undefined
  /** Where the current key comes from: `SECRETS_KEY`, or the file generated in `DATA_DIR`. */
  source: 'SECRETS_KEY' | 'DATA_DIR'
}

/**
 * `SECRETS_KEY` (and `SECRETS_KEY_PREVIOUS`), or else a key generated once in `DATA_DIR` (mode
 * 0600) and reused on every start. Every process of one database needs the same key: a data key
 * wrapped by another process's generated key does not unwrap here.
 */
export async function loadMasterKeys(config: Pick<Config, 'secretsKey' | 'secretsKeyPrevious' | 'dataDir'>): Promise<MasterKeys> {
  // loadConfig checked both variables.
  const previous = config.secretsKeyPrevious === undefined ? undefined : masterKey(decodeSecretsKey(config.secretsKeyPrevious)!)
  if (config.secretsKey !== undefined) return { current: masterKey(decodeSecretsKey(config.secretsKey)!), previous, source: 'SECRETS_KEY' }
  const text = await keyFileText(config.dataDir, SECRETS_KEY_FILE, () => randomBytes(KEY_BYTES).toString('base64'))
  const key = decodeSecretsKey(text)
  if (!key) {
    // Unlike the editor's signing secret, a new key cannot replace it: every secret is sealed under it.
    throw new Error(`${join(config.dataDir, SECRETS_KEY_FILE)} is not the base64 of 32 bytes: restore it from a backup (a new key cannot read the secrets stored), or set SECRETS_KEY`)
  }
  return { current: masterKey(key), previous, source: 'DATA_DIR' }
}
