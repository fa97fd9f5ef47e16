import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv'
import formatsPlugin from 'ajv-formats'
import type { FastifySchemaCompiler } from 'fastify'

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
function unstorableAt(data: unknown, path = ''): string | undefined {
  if (typeof data === 'string') return UNSTORABLE.test(data) ? path : undefined
  if (data === null || typeof data !== 'object') return undefined
  for (const [key, value] of Object.entries(data)) {
    if (UNSTORABLE.test(key)) return path
    const found = unstorableAt(value, `${path}/${escapePointer(key)}`)
    if (found !== undefined) return found
  }
  return undefined
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

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  storableOnly((httpPart === 'body' ? jsonBodies : textParts).compile(schema as object))
