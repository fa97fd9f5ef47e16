import { useEffect, useState } from 'react'
import { clockTime } from '../../shared/date-time'
import { useT } from '../i18n'
import type { PendingTimer } from './conversation'

/** "2 d 3 h", "1 h 5 min", "9 min 58 s", "42 s": the time left, in its two largest units. */
function timeLeft(seconds: number): string {
  const parts = [
    [Math.floor(seconds / 86_400), 'd'],
    [Math.floor(seconds / 3600) % 24, 'h'],
    [Math.floor(seconds / 60) % 60, 'min'],
    [seconds % 60, 's'],
  ] as const
  const first = parts.findIndex(([amount]) => amount > 0)
  if (first === -1) return '0 s'
  return parts
    .slice(first, first + 2)
    .filter(([amount]) => amount > 0)
    .map(([amount, unit]) => `${amount} ${unit}`)
    .join(' ')
}

/** The seconds until `dueAt`, counted down once a second. */
function useSecondsLeft(dueAt: string): number {
  const [now, setNow] = useState(() => Date.now())
  useEffect(() => {
    const ticking = setInterval(() => setNow(Date.now()), 1000)
    return () => clearInterval(ticking)
  }, [])
  return Math.max(0, Math.ceil((Date.parse(dueAt) - now) / 1000))
}

/**
 * The preview's pending timer, when it is due, and a button that fires it now rather than waiting.
 * Its turn comes on the session's stream like any other; a new timer replaces this one there.
 * `onFire` answers why the service refused, if it did.
 */
export function TimerBar({ timer, nodeName, onFire }: { timer: PendingTimer; nodeName: string; onFire(): Promise<string | undefined> }) {
  const t = useT()
  const left = useSecondsLeft(timer.dueAt)
  const [firing, setFiring] = useState(false)
  const [refused, setRefused] = useState<string>()
  const fire = async () => {
    setFiring(true)
    setRefused(undefined)
    const why = await onFire()
    // Fired, it stays busy until the stream brings the turn (and with it, this bar's end or its next timer).
    if (why !== undefined) {
      setRefused(why)
      setFiring(false)
    }
  }
  return (
    <div className="test-timer" data-testid="test-timer">
      <p className="test-timer-text">
        <span className="test-timer-node">{t('test.timer.at', { node: nodeName })}</span>{' '}
        <time dateTime={timer.dueAt} title={clockTime(timer.dueAt)}>
          {left > 0 ? t('test.timer.dueIn', { left: timeLeft(left) }) : t('test.timer.dueNow')}
        </time>
      </p>
      <button type="button" className="secondary" onClick={() => void fire()} disabled={firing} data-testid="test-timer-fire">
        {firing ? t('test.timer.firing') : t('test.timer.fire')}
      </button>
      {refused && (
        <p className="field-error" role="alert">
          {t('test.timer.refused', { message: refused })}
        </p>
      )}
    </div>
  )
}
