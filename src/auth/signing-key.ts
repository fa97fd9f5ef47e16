import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import type { Config } from '../config.js'
import { keyFileText } from '../secrets/key-file.js'

export const SIGNING_SECRET_FILE = 'editor-token-secret'
const MIN_SECRET_BYTES = 32

/**
 * The key that signs editor access tokens: `EDITOR_TOKEN_SECRET`, or else a secret generated once
 * in `DATA_DIR` (mode 0600) and reused on every start. Processes that serve the same tokens must
 * share it, so several processes set the variable.
 */
export async function loadEditorSigningKey(config: Pick<Config, 'editorTokenSecret' | 'dataDir'>): Promise<Uint8Array> {
  if (config.editorTokenSecret !== undefined) return new TextEncoder().encode(config.editorTokenSecret)
  const secret = await keyFileText(config.dataDir, SIGNING_SECRET_FILE, () => randomBytes(48).toString('base64url'))
  if (Buffer.byteLength(secret, 'utf8') < MIN_SECRET_BYTES) {
    throw new Error(`${join(config.dataDir, SIGNING_SECRET_FILE)} holds fewer than ${MIN_SECRET_BYTES} bytes: delete it to have a new secret generated, or set EDITOR_TOKEN_SECRET`)
  }
  return new TextEncoder().encode(secret)
}
