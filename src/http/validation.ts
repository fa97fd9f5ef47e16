import { Ajv, type Options } from 'ajv'
import formatsPlugin from 'ajv-formats'
import type { FastifySchemaCompiler } from 'fastify'

const addFormats = formatsPlugin as unknown as (ajv: Ajv) => Ajv

const build = (coerceTypes: Options['coerceTypes']) =>
  addFormats(new Ajv({ coerceTypes, useDefaults: true, removeAdditional: true, allErrors: false, strict: false }))

// Query strings and paths arrive as text, so their numbers are coerced; a JSON body is taken as
// sent, so `{"name": 42}` is a 400 rather than the name "42".
const textParts = build('array')
const jsonBodies = build(false)

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? jsonBodies : textParts).compile(schema as object)
