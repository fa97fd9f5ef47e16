import { randomBytes } from 'node:crypto'
import { access, link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Config } from '../config.js'

export const SIGNING_SECRET_FILE = 'editor-token-secret'
const MIN_SECRET_BYTES = 32

/**
 * The key that signs editor access tokens: `EDITOR_TOKEN_SECRET`, or else a secret generated once
 * in `DATA_DIR` (mode 0600) and reused on every start. Processes that serve the same tokens must
 * share it, so several processes set the variable.
 */
export async function loadEditorSigningKey(config: Pick<Config, 'editorTokenSecret' | 'dataDir'>): Promise<Uint8Array> {
  if (config.editorTokenSecret !== undefined) return new TextEncoder().encode(config.editorTokenSecret)
  const file = join(config.dataDir, SIGNING_SECRET_FILE)
  if (!(await exists(file))) await createSecretFile(config.dataDir, file)
  const secret = (await readFile(file, 'utf8')).trim()
  if (Buffer.byteLength(secret, 'utf8') < MIN_SECRET_BYTES) {
    throw new Error(`${file} holds fewer than ${MIN_SECRET_BYTES} bytes: delete it to have a new secret generated, or set EDITOR_TOKEN_SECRET`)
  }
  return new TextEncoder().encode(secret)
}

const exists = (file: string) =>
  access(file).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return false
      throw error
    },
  )

// Written whole under another name, then linked into place: a process starting at the same moment
// either finds the complete file or creates it, never reads it half written.
async function createSecretFile(dataDir: string, file: string): Promise<void> {
  await mkdir(dataDir, { recursive: true })
  const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`
  await writeFile(draft, `${randomBytes(48).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' })
  try {
    await link(draft, file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  } finally {
    await unlink(draft)
  }
}
