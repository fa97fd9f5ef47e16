import { Type, TypeGuard, type TObject, type TProperties, type TSchema } from '@sinclair/typebox'

/**
 * The schema with every object closed to the properties it names (`additionalProperties: false`),
 * so that one compiled check refuses a value carrying a property no schema names. Objects that say
 * what else they take (records, `additionalProperties` given) stay as they are. An intersection of
 * objects and unions of objects is distributed into a union of closed objects, as closing each
 * part would refuse the other parts' properties. Undefined where the schema alone cannot say it
 * (any other intersection, a reference): the caller then compares the value with a cleaned copy.
 */
export function closedSchema(schema: TSchema): TSchema | undefined {
  if (TypeGuard.IsIntersect(schema)) return closedIntersection(schema.allOf)
  if (TypeGuard.IsRef(schema) || TypeGuard.IsThis(schema)) return undefined
  if (TypeGuard.IsObject(schema)) {
    const properties = closedProperties(schema.properties)
    if (!properties) return undefined
    const { additionalProperties, patternProperties } = schema
    if (typeof additionalProperties === 'object') {
      const additional = closedSchema(additionalProperties)
      return additional && { ...schema, properties, additionalProperties: additional }
    }
    const saysWhatElse = additionalProperties !== undefined || patternProperties !== undefined
    return { ...schema, properties, ...(saysWhatElse ? {} : { additionalProperties: false }) }
  }
  if (TypeGuard.IsRecord(schema)) {
    const [pattern, value] = Object.entries(schema.patternProperties)[0]!
    const closedValue = closedSchema(value)
    return closedValue && { ...schema, patternProperties: { [pattern]: closedValue } }
  }
  if (TypeGuard.IsUnion(schema)) {
    const variants = schema.anyOf.map(closedSchema)
    return variants.every((v) => v !== undefined) ? { ...schema, anyOf: variants } : undefined
  }
  if (TypeGuard.IsArray(schema)) {
    const items = closedSchema(schema.items)
    return items && { ...schema, items }
  }
  if (TypeGuard.IsTuple(schema)) {
    const items = schema.items?.map(closedSchema)
    return items?.some((i) => i === undefined) ? undefined : { ...schema, ...(items ? { items } : {}) }
  }
  return schema
}

function closedProperties(properties: TProperties): TProperties | undefined {
  const closed: TProperties = {}
  for (const [key, value] of Object.entries(properties)) {
    const property = closedSchema(value)
    if (!property) return undefined
    closed[key] = property
  }
  return closed
}

/** Each combination of the parts' objects, merged into one closed object; undefined unless every part is an object or a union of objects. */
function closedIntersection(parts: readonly TSchema[]): TSchema | undefined {
  const choices: TObject[][] = []
  for (const part of parts) {
    if (TypeGuard.IsObject(part)) choices.push([part])
    else if (TypeGuard.IsUnion(part) && part.anyOf.every((v) => TypeGuard.IsObject(v))) choices.push(part.anyOf as TObject[])
    else return undefined
  }
  const merged: TObject[] = []
  const combine = (index: number, properties: TProperties): boolean => {
    if (index === choices.length) {
      merged.push(Type.Object(properties))
      return true
    }
    return choices[index]!.every((object) => {
      const shared = Object.keys(object.properties).filter((key) => key in properties)
      if (shared.length > 0 || object.additionalProperties !== undefined || object.patternProperties !== undefined) return false
      return combine(index + 1, { ...properties, ...object.properties })
    })
  }
  if (!combine(0, {})) return undefined
  const closed = merged.map(closedSchema)
  if (closed.some((c) => c === undefined)) return undefined
  return closed.length === 1 ? closed[0] : Type.Union(closed as TSchema[])
}
