import { ApiError } from '../../api'

// The domain's checks word a problem as `stages/0/name: …`, `values/<field id>: …` or `stageId: …`.
const DOMAIN_FIELD_ERROR = /^((?:stages|fields|values)\/[\w-]+(?:\/\w+)?|stageId|tags): (.+)$/s

/**
 * The API's messages by form field (`name`, `stages.0.name`, `values.<field id>`), from the
 * request validation (`body/…`, which ApiError reads) and from the domain's checks.
 */
export function fieldErrors(error: unknown): Record<string, string> {
  if (!(error instanceof ApiError)) return {}
  const domain = DOMAIN_FIELD_ERROR.exec(error.message)
  return domain ? { ...error.fields, [domain[1]!.replace(/\//g, '.')]: domain[2]! } : error.fields
}
