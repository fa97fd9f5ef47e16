import { MAX_SECRET_VALUE_BYTES, SECRET_NAME_PATTERN, secretNamed, secrets, secretsStream, type SecretEvent, type WorkspaceSecret, type WorkspaceSecrets } from '../domain/secret.js'
import { BadRequestError } from '../errors.js'
import type { EventStore } from '../eventstore/port.js'
import { foldStream } from '../eventstore/stream-state.js'
import { open, seal, valueContext } from '../secrets/cipher.js'
import type { SecretKeyring } from '../secrets/keyring.js'
import type { CommandContext } from './context.js'
import { handleCommand, type CommandResult } from './handle.js'

/** What reading secrets takes: the event store (their ciphertexts) and the keyring (their data keys). */
export interface SecretsReader {
  store: EventStore
  secrets: SecretKeyring
}

/** A command context that also holds the keyring. */
export type SecretsContext = CommandContext & SecretsReader

/** A secret as the API shows it: never its value. */
export interface SecretSummary {
  name: string
  createdAt: string
  updatedAt: string
}

const summary = ({ name, createdAt, updatedAt }: WorkspaceSecret): SecretSummary => ({ name, createdAt, updatedAt })

const checkName = (name: string): void => {
  if (!SECRET_NAME_PATTERN.test(name)) throw new BadRequestError(`a secret's name is 1 to 64 letters, digits or _`)
}

/**
 * Sets a secret, replacing its value if it has one. The value is sealed with a fresh data key, so
 * the previous value's key is shredded once the new one is recorded. `created`: there was none.
 * Messages never hold the value.
 */
export async function putSecret(ctx: SecretsContext, workspaceId: string, name: string, value: string): Promise<{ secret: SecretSummary; created: boolean }> {
  checkName(name)
  const plaintext = Buffer.from(value, 'utf8')
  if (plaintext.length === 0) throw new BadRequestError('value must not be empty')
  if (plaintext.length > MAX_SECRET_VALUE_BYTES) throw new BadRequestError(`value must be at most ${MAX_SECRET_VALUE_BYTES} bytes of UTF-8, got ${plaintext.length}`)
  const { keyId, key } = await ctx.secrets.issue(workspaceId, name)
  const sealed = seal(key, plaintext, valueContext(workspaceId, name, keyId))
  key.fill(0)
  plaintext.fill(0)
  let result: CommandResult<WorkspaceSecrets, SecretEvent>
  try {
    result = await handleCommand(ctx.store, secrets, secretsStream(workspaceId), {
      type: 'SetSecret',
      data: { workspaceId, name, keyId, ...sealed, now: ctx.now().toISOString() },
    }, ctx.metadata)
  } catch (error) {
    // Nothing was recorded (a refusal, a store away): the key sealed nothing anyone can read.
    await ctx.secrets.shred(workspaceId, [keyId]).catch((shredError: unknown) => ctx.logger.warn({ err: shredError, keyId }, 'an unused secret data key stays until its name is written again'))
    throw error
  }
  const { version, retiredKeyId } = result.state
  await ctx.secrets.settle(workspaceId, name, { version, usedKeyId: keyId, retiredKeyId })
  return { secret: summary(secretNamed(result.state, name)!), created: retiredKeyId === null }
}

/** Deletes a secret and shreds its data keys: its recorded ciphertexts stay, unreadable. */
export async function deleteSecret(ctx: SecretsContext, workspaceId: string, name: string): Promise<void> {
  checkName(name)
  const result = await handleCommand(ctx.store, secrets, secretsStream(workspaceId), {
    type: 'DeleteSecret',
    data: { workspaceId, name, now: ctx.now().toISOString() },
  }, ctx.metadata)
  const { version, retiredKeyId } = result.state
  await ctx.secrets.settle(workspaceId, name, { version, retiredKeyId })
}

/** The workspace's secrets by name, without values; a page of them. */
export async function listSecrets(ctx: { store: EventStore }, workspaceId: string, paging: { page: number; size: number }): Promise<{ content: SecretSummary[]; totalElements: number }> {
  const { state } = await foldStream(ctx.store, secrets, secretsStream(workspaceId))
  const all = Object.values(state.byName).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  return { content: all.slice(paging.page * paging.size, (paging.page + 1) * paging.size).map(summary), totalElements: all.length }
}

/**
 * The values of the workspace's secrets named, for a call that needs them now: a name with no
 * secret, or whose data key was shredded, is absent from the map. Throws when a data key is wrapped
 * by a master key this process lacks (processes configured with different `SECRETS_KEY`s).
 */
export async function revealSecrets(ctx: SecretsReader, workspaceId: string, names: readonly string[]): Promise<Map<string, string>> {
  const values = new Map<string, string>()
  const wanted = [...new Set(names)].filter((name) => SECRET_NAME_PATTERN.test(name))
  if (wanted.length === 0) return values
  const { state } = await foldStream(ctx.store, secrets, secretsStream(workspaceId))
  const found = wanted.flatMap((name) => secretNamed(state, name) ?? [])
  const keys = await ctx.secrets.unwrap(workspaceId, found.map((secret) => secret.keyId))
  for (const secret of found) {
    const key = keys.get(secret.keyId)
    if (key) values.set(secret.name, open(key, secret, valueContext(workspaceId, secret.name, secret.keyId)).toString('utf8'))
  }
  for (const key of keys.values()) key.fill(0)
  return values
}
