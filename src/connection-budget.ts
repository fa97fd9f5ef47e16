import { allProjections } from './all-projections.js'
import type { Config } from './config.js'
import type { Role } from './roles.js'

type PoolSettings = Pick<Config, 'apiPoolSize' | 'enginePoolSize' | 'projectorPoolSize' | 'dispatcherPoolSize'>

/** The Postgres pools of one process (src/store/connect.ts); a pool of size 0 is never opened. */
export interface PoolSizes {
  /** The event store, requests, turns, readiness and metrics, and the LISTEN connections. */
  shared: number
  /** Read models applied in their batches' transactions (PROJECTOR_APPLICATION_NAME). */
  projector: number
  /** Webhook claims and attempt records (DISPATCHER_APPLICATION_NAME). */
  dispatcher: number
}

/** Every process listens on two channels at most (`flowd_events`, `flowd_checkpoints`), each on a connection of the shared pool held for good. */
const LISTEN_CONNECTIONS = 2
/** An API process also listens for the text of AI replies that other processes generate, while a session stream is open. */
const API_LISTEN_CONNECTIONS = 1
/** Startup's migration check, then readiness (one statement however many probes wait on it), metrics and stored checkpoint reads. */
const UPKEEP_CONNECTIONS = 1
/** The projections' reads of their next batches: short statements beside the applies, which hold the projector pool. */
const PROJECTOR_EVENT_READS = 4
/**
 * A lease connection per leasing role (src/store/lease.ts): one holds the read models' leases, with
 * the projector role; one the engine partitions' and the sweeper's, with the engine role.
 */
const LEASE_CONNECTION_PER_ROLE: Partial<Record<Role, number>> = { projector: 1, engine: 1 }

/** One connection per read model applying at once, and one for a stored checkpoint or parking read beside them. */
export const projectorPoolSize = (config: PoolSettings): number => config.projectorPoolSize ?? allProjections.length + 1

/** The pools a process of `roles` opens, each sized for its roles. */
export function poolSizes(roles: readonly Role[], config: PoolSettings): PoolSizes {
  const has = (role: Role) => roles.includes(role)
  return {
    shared:
      LISTEN_CONNECTIONS +
      UPKEEP_CONNECTIONS +
      (has('api') ? config.apiPoolSize + API_LISTEN_CONNECTIONS : 0) +
      (has('engine') ? config.enginePoolSize : 0) +
      (has('projector') ? PROJECTOR_EVENT_READS : 0),
    projector: has('projector') ? projectorPoolSize(config) : 0,
    dispatcher: has('dispatcher') ? config.dispatcherPoolSize : 0,
  }
}

/**
 * The most Postgres connections a `flowd start` process of `roles` opens: its pools, the LISTEN
 * connections among them, and its lease connections. `max_connections` must cover the sum over the
 * deployment's processes (docs/scaling.md).
 */
export function connectionBudget(roles: readonly Role[], config: PoolSettings): number {
  const pools = poolSizes(roles, config)
  const leases = roles.reduce((sum, role) => sum + (LEASE_CONNECTION_PER_ROLE[role] ?? 0), 0)
  return pools.shared + pools.projector + pools.dispatcher + leases
}
