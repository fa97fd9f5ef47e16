import { FormatRegistry, Type } from '@sinclair/typebox'

export const Uuid = Type.String({ format: 'uuid' })
/** ISO 8601 UTC with milliseconds, as every timestamp in events and REST bodies. */
export const Timestamp = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$' })

/**
 * Any object key, for records. `Type.Record(Type.String(), …)` names its keys by `^(.*)$`, which
 * no key holding a line break matches, so a check of the properties a schema names (the event
 * schema check, `Value.Clean`) would refuse such a key: a 500 for a valid JSON object.
 */
export const AnyKey = Type.String({ pattern: '^[\\s\\S]*$' })

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
if (!FormatRegistry.Has('uuid')) FormatRegistry.Set('uuid', (value) => uuidPattern.test(value))
