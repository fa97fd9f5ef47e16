import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv'
import formatsPlugin from 'ajv-formats'
import type { FastifyRequest, FastifySchemaCompiler } from 'fastify'
import { BadRequestError } from '../errors.js'

const addFormats = formatsPlugin as unknown as (ajv: Ajv) => Ajv

const build = (coerceTypes: Options['coerceTypes']) =>
  addFormats(new Ajv({ coerceTypes, useDefaults: true, removeAdditional: true, allErrors: false, strict: false }))

// Query strings and paths arrive as text, so their numbers are coerced; a JSON body is taken as
// sent, so `{"name": 42}` is a 400 rather than the name "42".
const textParts = build('array')
const jsonBodies = build(false)

const escapePointer = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1')

/** U+0000, or half of a surrogate pair without its other half (JSON's `"\ud800"` parses to one). */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** Where `data` holds unstorable text, in a string or a key, as an Ajv instance path; undefined when nowhere. */
function unstorableAt(data: unknown): string | undefined {
  // The first offending key or value in document order: children go onto the stack reversed, and
  // a key is checked when its value is taken off.
  const pending: { value: unknown; key?: string; parentPath: string }[] = [{ value: data, parentPath: '' }]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value, key, parentPath } = next
    if (key !== undefined && UNSTORABLE.test(key)) return parentPath
    const path = key === undefined ? parentPath : `${parentPath}/${escapePointer(key)}`
    if (typeof value === 'string' && UNSTORABLE.test(value)) return path
    if (value === null || typeof value !== 'object') continue
    for (const [childKey, child] of Object.entries(value).reverse()) pending.push({ value: child, key: childKey, parentPath: path })
  }
  return undefined
}

/** Deeper than any body the API takes, and shallow enough for anything that walks a body by recursion. */
export const MAX_BODY_DEPTH = 64

/** Whether `data` has arrays or objects nested more than `limit` levels deep (the outermost is level 1). */
function nestsDeeperThan(data: unknown, limit: number): boolean {
  const pending: { value: unknown; level: number }[] = [{ value: data, level: 1 }]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value, level } = next
    if (value === null || typeof value !== 'object') continue
    if (level > limit) return true
    for (const child of Object.values(value)) pending.push({ value: child, level: level + 1 })
  }
  return false
}

/**
 * A `preValidation` hook for every route: a body nested past MAX_BODY_DEPTH is a 400 before Ajv,
 * the checks here or a handler walk it, any of which would exhaust the stack on a deep enough one.
 */
export async function refuseDeepBodies(request: FastifyRequest): Promise<void> {
  if (nestsDeeperThan(request.body, MAX_BODY_DEPTH)) throw new BadRequestError(`body must not nest deeper than ${MAX_BODY_DEPTH} levels`)
}

type Validator = ((data: unknown, context?: Parameters<ValidateFunction>[1]) => boolean) & Pick<ValidateFunction, 'errors' | 'schemaEnv'>

/**
 * Postgres holds neither U+0000 nor a lone surrogate in `text` or `jsonb`: either, anywhere in a
 * request, is a 400 here rather than a failed query or append (a 500).
 */
function storableOnly(validate: ValidateFunction): Validator {
  const check: Validator = Object.assign(
    (data: unknown, context?: Parameters<ValidateFunction>[1]) => {
      if (!validate(data, context)) {
        check.errors = validate.errors
        return false
      }
      const at = unstorableAt(data)
      const error: ErrorObject = { keyword: 'unicode', instancePath: at ?? '', schemaPath: '#', params: {}, message: 'must not contain U+0000 or a lone surrogate' }
      check.errors = at === undefined ? null : [error]
      return at === undefined
    },
    // Fastify passes the parent (so Ajv may coerce the root) only to a function that has this.
    { schemaEnv: validate.schemaEnv, errors: null },
  )
  return check
}

/**
 * The message of a 400 for a request its schema refuses: each problem as the request part, the
 * path in it and Ajv's words (`body/fields/0/currency must match pattern "^[A-Z]{3}$"`), an enum's
 * allowed values after a colon, joined by ", ". The front ends read it back into fields.
 */
export const schemaErrorMessage = (errors: readonly Pick<ErrorObject, 'keyword' | 'instancePath' | 'params' | 'message'>[], dataVar: string): string =>
  errors
    .map((e) => {
      const allowed = e.keyword === 'enum' ? `: ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}` : ''
      return `${dataVar}${e.instancePath} ${e.message}${allowed}`
    })
    .join(', ')

/**
 * Each route's validator, compiled by Ajv on the first request that needs it rather than when the
 * route is registered: a process compiles only what it serves, and starts without compiling some
 * hundred schemas first (about 0.3 s of CPU). The schemas are checked at once all the same.
 */
export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? jsonBodies : textParts
  if (!ajv.validateSchema(schema as object)) throw new Error(`invalid ${httpPart} schema: ${ajv.errorsText(ajv.errors)}`)
  let compiled: Validator | undefined
  const validate: Validator = Object.assign(
    (data: unknown, context?: Parameters<ValidateFunction>[1]) => {
      compiled ??= storableOnly(ajv.compile(schema as object))
      const valid = compiled(data, context)
      validate.errors = compiled.errors
      return valid
    },
    // Truthy so that Fastify passes the parent, as it does for a compiled Ajv function.
    { schemaEnv: {} as ValidateFunction['schemaEnv'], errors: null },
  )
  return validate
}
