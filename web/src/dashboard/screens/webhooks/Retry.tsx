import { useEffect, useRef, useState } from 'react'
import { api, unwrap } from '../../api'
import { ErrorNotice } from '../../components/ui'
import { shortId } from '../../components/short-id'
import { useT } from '../../i18n'
import { canRetry, inFlight, type Delivery } from './api-types'

/** How often a delivery sent again is looked at, and for how long, until its attempts are over. */
const FOLLOW_EVERY_MS = 700
const FOLLOW_AT_MOST = 90

export type Phase = { name: 'idle' } | { name: 'sending' } | { name: 'following' } | { name: 'settled' } | { name: 'gave-up' } | { name: 'failed'; error: unknown }

/**
 * A delivery that can be sent again from the screen: `retry` asks the API to send it at once, then
 * follows it until its attempts are over, so the screen shows each status it goes through.
 */
export function useRetriableDelivery(initial: Delivery) {
  const [delivery, setDelivery] = useState(initial)
  const [phase, setPhase] = useState<Phase>({ name: 'idle' })
  const alive = useRef(true)
  useEffect(() => setDelivery(initial), [initial])
  useEffect(() => {
    alive.current = true
    return () => {
      alive.current = false
    }
  }, [])

  // Settled when its attempts are over, or (a failed one, brought forward) once the attempt is made.
  async function follow(id: string, attemptsBefore: number) {
    for (let look = 0; look < FOLLOW_AT_MOST && alive.current; look++) {
      await new Promise((resolve) => setTimeout(resolve, FOLLOW_EVERY_MS))
      const current = await unwrap(api.GET('/v1/webhooks/deliveries/{deliveryId}', { params: { path: { deliveryId: id } } }))
      if (!alive.current) return
      setDelivery(current)
      const attempted = current.status === 'failed' && current.attemptCount > attemptsBefore
      if (!inFlight(current.status) || attempted) return setPhase({ name: 'settled' })
    }
    if (alive.current) setPhase({ name: 'gave-up' })
  }

  async function retry() {
    setPhase({ name: 'sending' })
    try {
      const queued = await unwrap(api.POST('/v1/webhooks/deliveries/{deliveryId}/retry', { params: { path: { deliveryId: delivery.id } } }))
      setDelivery(queued)
      setPhase({ name: 'following' })
      await follow(queued.id, queued.attemptCount)
    } catch (error) {
      if (alive.current) setPhase({ name: 'failed', error })
    }
  }

  return { delivery, phase, retry }
}

/** The retry button (a failed, dead or delivered delivery) and what became of the retry, announced. */
export function RetryControl({ delivery, phase, onRetry }: { delivery: Delivery; phase: Phase; onRetry(): void }) {
  const t = useT()
  const short = shortId(delivery.id)
  const status = t(`webhooks.status.${delivery.status}`)
  // A delivered webhook can be sent once more; a failed or dead one is retried.
  const again = delivery.status === 'delivered'
  const said: Record<Phase['name'], string> = {
    idle: '',
    sending: t('webhooks.retry.sending'),
    following: t('webhooks.retry.following', { status }),
    settled: t('webhooks.retry.settled', { status }),
    'gave-up': t('webhooks.retry.gaveUp', { status }),
    failed: '',
  }
  return (
    <span className="webhooks-retry">
      {canRetry(delivery.status) && phase.name !== 'sending' && (
        <button type="button" className="secondary" onClick={onRetry} aria-label={t(again ? 'webhooks.retry.againOf' : 'webhooks.retry.buttonOf', { id: short })}>
          {t(again ? 'webhooks.retry.again' : 'webhooks.retry.button')}
        </button>
      )}
      <span role="status">{said[phase.name]}</span>
      {phase.name === 'failed' && <ErrorNotice error={phase.error} />}
    </span>
  )
}
