import { Type, type Static } from '@sinclair/typebox'
import { ConflictError, NotFoundError } from '../errors.js'
import type { Decider } from './decider.js'
import { Timestamp, Uuid } from './schemas.js'
import { MAX_SECRET_VALUE_BYTES, MAX_SECRETS_PER_WORKSPACE, SECRET_NAME_PATTERN } from './secret-rules.js'

/**
 * Workspace secrets: values flows use at call time (API tokens, passwords) that nobody reads back.
 * All secrets of a workspace live in one stream, so a name is unique exactly and the limit on their
 * number holds under concurrent writes. An event never holds a value: only its ciphertext, sealed
 * with a data key of its own that lives outside the event store (`src/secrets/`). Shredding that
 * key leaves the ciphertext unreadable for good.
 */
export const secretsStream = (workspaceId: string) => `secrets-${workspaceId}`

export { MAX_SECRET_VALUE_BYTES, MAX_SECRETS_PER_WORKSPACE, SECRET_NAME_PATTERN } from './secret-rules.js'
export const SecretName = Type.String({ pattern: SECRET_NAME_PATTERN.source })

/** base64url without padding. */
const Base64Url = (bytes: { min: number; max: number }) =>
  Type.String({ pattern: '^[A-Za-z0-9_-]*$', minLength: Math.ceil((bytes.min * 4) / 3), maxLength: Math.ceil((bytes.max * 4) / 3) })

/** AES-256-GCM's output: a 12-byte nonce, the 16-byte tag and the ciphertext, as long as the value. */
const Sealed = {
  iv: Base64Url({ min: 12, max: 12 }),
  tag: Base64Url({ min: 16, max: 16 }),
  ciphertext: Base64Url({ min: 1, max: MAX_SECRET_VALUE_BYTES }),
}

/** A value sealed with data key `keyId`, replacing the name's previous value if any. */
const SecretSet = Type.Object({ workspaceId: Uuid, name: SecretName, keyId: Uuid, ...Sealed, setAt: Timestamp })
/** `keyId`: the data key of the value deleted, shredded with it. */
const SecretDeleted = Type.Object({ workspaceId: Uuid, name: SecretName, keyId: Uuid, deletedAt: Timestamp })

export type SecretEvent = { type: 'SecretSet'; data: Static<typeof SecretSet> } | { type: 'SecretDeleted'; data: Static<typeof SecretDeleted> }

/** A value as stored: its data key's id and what AES-256-GCM made of it, base64url. */
export interface SealedValue {
  keyId: string
  iv: string
  tag: string
  ciphertext: string
}

export type SecretCommand =
  | { type: 'SetSecret'; data: { workspaceId: string; name: string; now: string } & SealedValue }
  | { type: 'DeleteSecret'; data: { workspaceId: string; name: string; now: string } }

export interface WorkspaceSecret extends SealedValue {
  name: string
  createdAt: string
  updatedAt: string
}

export interface WorkspaceSecrets {
  /** Live secrets by name; read it with {@link secretNamed}, as a name may be `__proto__`. */
  byName: Readonly<Record<string, WorkspaceSecret>>
  /**
   * The data key the last event took out of use (the value it replaced or deleted), or null: the
   * writer shreds it once its event is appended.
   */
  retiredKeyId: string | null
  /** Events folded: the version of the stream whose last event made this state. */
  version: number
}

/** The live secret of that name, if any. */
export const secretNamed = (state: WorkspaceSecrets, name: string): WorkspaceSecret | undefined => (Object.hasOwn(state.byName, name) ? state.byName[name] : undefined)

export const secrets: Decider<SecretCommand, WorkspaceSecrets, SecretEvent> = {
  initialState: { byName: {}, retiredKeyId: null, version: 0 },
  eventSchemas: { SecretSet, SecretDeleted },

  decide(command, state) {
    switch (command.type) {
      case 'SetSecret': {
        const { now, ...data } = command.data
        const current = secretNamed(state, data.name)
        if (!current && Object.keys(state.byName).length >= MAX_SECRETS_PER_WORKSPACE) {
          throw new ConflictError(`this workspace holds ${MAX_SECRETS_PER_WORKSPACE} secrets, the most it may; delete one before adding "${data.name}"`)
        }
        if (current?.keyId === data.keyId) return []
        return [{ type: 'SecretSet', data: { ...data, setAt: now } }]
      }
      case 'DeleteSecret': {
        const { workspaceId, name, now } = command.data
        const current = secretNamed(state, name)
        if (!current) throw new NotFoundError(`no secret named "${name}" in this workspace`)
        return [{ type: 'SecretDeleted', data: { workspaceId, name, keyId: current.keyId, deletedAt: now } }]
      }
      default: {
        const exhaustive: never = command
        throw new Error(`unknown command ${String(exhaustive)}`)
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'SecretSet': {
        const { name, keyId, iv, tag, ciphertext, setAt } = event.data
        const current = secretNamed(state, name)
        const secret = { name, keyId, iv, tag, ciphertext, createdAt: current?.createdAt ?? setAt, updatedAt: setAt }
        return { byName: { ...state.byName, [name]: secret }, retiredKeyId: current?.keyId ?? null, version: state.version + 1 }
      }
      case 'SecretDeleted': {
        const { [event.data.name]: _deleted, ...rest } = state.byName
        return { byName: rest, retiredKeyId: event.data.keyId, version: state.version + 1 }
      }
      default: {
        const exhaustive: never = event
        return exhaustive
      }
    }
  },
}
