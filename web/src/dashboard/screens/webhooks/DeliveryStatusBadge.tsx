import { useT } from '../../i18n'
import type { DeliveryStatus } from './api-types'

const TONES: Partial<Record<DeliveryStatus, string>> = { delivered: 'ok', dead: 'error', failed: 'warn' }

/** A delivery's status as a badge, coloured by whether it arrived. */
export function DeliveryStatusBadge({ status }: { status: DeliveryStatus }) {
  const t = useT()
  const tone = TONES[status]
  return <span className={tone ? `badge status-badge ${tone}` : 'badge status-badge'}>{t(`webhooks.status.${status}`)}</span>
}
