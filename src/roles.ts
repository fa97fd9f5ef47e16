/** What a process runs (`flowd start --role`); the default, and the embedded database, run them all. */
export const ROLES = ['api', 'projector', 'engine', 'dispatcher'] as const
export type Role = (typeof ROLES)[number]
