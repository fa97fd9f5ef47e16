import { apiKeysProjection } from './api-keys.js'
import { flowsProjection } from './flows.js'
import { organizationsProjection } from './organizations.js'
import type { Projection } from './projection.js'
import { sectorsProjection } from './sectors.js'
import { workspacesProjection } from './workspaces.js'

/** Every read model the service keeps. */
export const allProjections: readonly Projection[] = [
  organizationsProjection,
  workspacesProjection,
  apiKeysProjection,
  sectorsProjection,
  flowsProjection,
]
