import { createHmac, createSecretKey, type KeyObject } from 'node:crypto'
import { BoundedMap } from '../bounded-map.js'

const SECRET_PREFIX = 'whsec_'

/** The raw HMAC key of a Standard Webhooks secret `whsec_<base64>`. */
export function secretKey(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('webhook secret must look like whsec_<base64>')
  const encoded = secret.slice(SECRET_PREFIX.length)
  if (encoded.length === 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) throw new Error('webhook secret must look like whsec_<base64>')
  return Buffer.from(encoded, 'base64')
}

/** HMAC keys kept per secret; the oldest go first. */
const keys = new BoundedMap<string, KeyObject>(1_000)

/**
 * The secret's HMAC key as a KeyObject: an HMAC with one costs a fifth of one with the raw bytes,
 * which OpenSSL imports again for every signature.
 */
function hmacKey(secret: string): KeyObject {
  let key = keys.get(secret)
  if (!key) {
    key = createSecretKey(secretKey(secret))
    keys.set(secret, key)
  }
  return key
}

/** Standard Webhooks signature: `v1,` + base64 HMAC-SHA256 of `${id}.${timestamp}.${body}`. */
export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', hmacKey(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64')
  return `v1,${mac}`
}

export const WEBHOOK_USER_AGENT = 'flowd-webhooks/1'

/** The headers of one delivery attempt. `id` stays the same across retries; the timestamp does not. */
export function webhookHeaders(secret: string, id: string, timestampSeconds: number, body: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': WEBHOOK_USER_AGENT,
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': signWebhook(secret, id, timestampSeconds, body),
  }
}
