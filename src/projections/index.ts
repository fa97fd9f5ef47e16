import { apiKeysProjection } from './api-keys.js'
import { organizationsProjection } from './organizations.js'
import type { Projection } from './projection.js'
import { workspacesProjection } from './workspaces.js'

/** Every read model the service keeps. */
export const allProjections: readonly Projection[] = [organizationsProjection, workspacesProjection, apiKeysProjection]
