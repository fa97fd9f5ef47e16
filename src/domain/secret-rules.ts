/**
 * The rules of a workspace secret's name and value, apart from the schemas of src/domain/secret.ts:
 * the dashboard imports this file to check a form as people type, without TypeBox.
 */

/** Letters, digits and `_`, 1 to 64 of them, as flows write a secret's name. */
export const SECRET_NAME_PATTERN = /^[A-Za-z0-9_]{1,64}$/

/** Secrets one workspace may hold. */
export const MAX_SECRETS_PER_WORKSPACE = 100
/** The largest value, in bytes of UTF-8. */
export const MAX_SECRET_VALUE_BYTES = 8192
