import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'

/**
 * The crypto of workspace secrets, in one place: envelope encryption with AES-256-GCM. Each value
 * is sealed with a data key of its own; each data key is wrapped by the master key the operator
 * provides. Both seals bind what they belong to as additional authenticated data, so a ciphertext
 * or a wrapped key moved to another secret or another key's row fails to open.
 */

const ALGORITHM = 'aes-256-gcm'
export const KEY_BYTES = 32
const IV_BYTES = 12
const TAG_BYTES = 16

/** A master key and its fingerprint, which the wrapped keys record. */
export interface MasterKey {
  /** Short, and says nothing of the key: 16 hex digits of a SHA-256 of it. */
  readonly id: string
  readonly key: Buffer
}

/** What AES-256-GCM makes of a plaintext, base64url. */
export interface Sealed {
  iv: string
  tag: string
  ciphertext: string
}

/** Thrown when a seal does not open: the wrong key, or a ciphertext changed or moved. */
export class SealBrokenError extends Error {
  override readonly name = 'SealBrokenError'
}

export function masterKey(key: Uint8Array): MasterKey {
  if (key.length !== KEY_BYTES) throw new Error(`a master key is ${KEY_BYTES} bytes, got ${key.length}`)
  const bytes = Buffer.from(key)
  const id = createHash('sha256').update('flowd secrets master key\0').update(bytes).digest('hex').slice(0, 16)
  return { id, key: bytes }
}

export const newDataKey = (): Buffer => randomBytes(KEY_BYTES)

export function seal(key: Uint8Array, plaintext: Uint8Array, associatedData: string): Sealed {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES })
  cipher.setAAD(Buffer.from(associatedData, 'utf8'))
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()])
  return { iv: iv.toString('base64url'), tag: cipher.getAuthTag().toString('base64url'), ciphertext: ciphertext.toString('base64url') }
}

export function open(key: Uint8Array, sealed: Sealed, associatedData: string): Buffer {
  const iv = Buffer.from(sealed.iv, 'base64url')
  const tag = Buffer.from(sealed.tag, 'base64url')
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new SealBrokenError('not an AES-256-GCM seal')
  const decipher = createDecipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES })
  decipher.setAAD(Buffer.from(associatedData, 'utf8'))
  decipher.setAuthTag(tag)
  try {
    return Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, 'base64url')), decipher.final()])
  } catch {
    throw new SealBrokenError('the seal does not open with this key')
  }
}

/** A data key wrapped by a master key for the row `keyId`: nonce, tag and wrapped key in one base64url string. */
export function wrapKey(master: MasterKey, keyId: string, dataKey: Uint8Array): string {
  const { iv, tag, ciphertext } = seal(master.key, dataKey, `data key ${keyId}`)
  return `${iv}.${tag}.${ciphertext}`
}

export function unwrapKey(master: MasterKey, keyId: string, wrapped: string): Buffer {
  const [iv, tag, ciphertext, ...rest] = wrapped.split('.')
  if (iv === undefined || tag === undefined || ciphertext === undefined || rest.length) throw new SealBrokenError(`data key ${keyId} is not a wrapped key`)
  const key = open(master.key, { iv, tag, ciphertext }, `data key ${keyId}`)
  if (key.length !== KEY_BYTES) throw new SealBrokenError(`data key ${keyId} is not ${KEY_BYTES} bytes`)
  return key
}

/** What a secret's value is bound to: its workspace, name and data key. */
export const valueContext = (workspaceId: string, name: string, keyId: string): string => `secret ${workspaceId}/${name}/${keyId}`
