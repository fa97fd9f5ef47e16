import type { JsonOf, paths } from '../../api'

export type Delivery = JsonOf<paths['/v1/webhooks/deliveries/{deliveryId}']['get']['responses'][200]>
export type Attempt = Delivery['attempts'][number]
export type DeliveryStatus = Delivery['status']

/** The statuses GET /v1/webhooks/deliveries filters by. */
export const DELIVERY_STATUSES = ['pending', 'failed', 'delivered', 'dead', 'skipped'] as const satisfies readonly DeliveryStatus[]

/**
 * What the API retries: a failed delivery (its next attempt made at once), a dead one, or a
 * delivered one (sent once more). A pending one is already on its way; a skipped one has nowhere to go.
 */
export const canRetry = (status: DeliveryStatus): boolean => status === 'failed' || status === 'dead' || status === 'delivered'

/** Still on its way: the service will attempt it again without being asked. */
export const inFlight = (status: DeliveryStatus): boolean => status === 'pending' || status === 'failed'

export type Destination = JsonOf<paths['/v1/webhooks/destinations']['get']['responses'][200]>['content'][number]
