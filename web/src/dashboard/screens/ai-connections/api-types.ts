import type { JsonOf, paths } from '../../api'

/** A connection as the API shows it: its settings and dates; the key stays in the secret it names. */
export type AiConnection = JsonOf<paths['/v1/ai-connections/{id}']['get']['responses'][200]>
export type ConnectionHeader = AiConnection['headers'][number]
/** What `POST /v1/ai-connections/{id}/check` found. */
export type ConnectionCheck = JsonOf<paths['/v1/ai-connections/{id}/check']['post']['responses'][200]>
