import { createHash, randomBytes } from 'node:crypto'

/** 32 random bytes, base64url: the one-time and refresh tokens. */
export const newOpaqueToken = (): string => randomBytes(32).toString('base64url')

/** Only this SHA-256 (hex) is stored: a copy of the tables lets nobody act as an editor. */
export const hashOpaqueToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex')
