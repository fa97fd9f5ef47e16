import type { Translate } from '../../i18n'
import type { ReleaseChange } from './api-types'

/**
 * A change of a flow's release in a sentence. A change holds the release it left; `before`, the
 * change before it (none for the first), says what it changed from: whether a rollback went back or
 * forward, and whose gradual release an end stopped.
 */
export function releaseChangeWords(change: ReleaseChange, before: ReleaseChange | undefined, t: Translate): string {
  const { liveVersion: live, gradual } = change
  switch (change.reason) {
    case 'publish': {
      // No version made: the newest one, already published, put out again after a rollback or with another share.
      const again = change.published === null
      const version = change.published ?? gradual?.version ?? live
      if (gradual?.version === version) return t(again ? 'releases.history.republishedFor' : 'releases.history.publishedFor', { version, percent: gradual.percent, live })
      return t(again ? 'releases.history.republished' : 'releases.history.published', { version })
    }
    case 'rollback':
      return t(before && live > before.liveVersion ? 'releases.history.madeLive' : 'releases.history.rolledBack', { version: live })
    case 'release':
      return gradual ? t('releases.history.released', { version: gradual.version, percent: gradual.percent, live }) : t('releases.history.promoted', { version: live })
    case 'promote':
      return t('releases.history.promoted', { version: live })
    case 'halt':
      return before?.gradual ? t('releases.history.halted', { version: before.gradual.version, live }) : t('releases.history.haltedUnnamed', { live })
    default: {
      const exhaustive: never = change.reason
      return exhaustive
    }
  }
}
