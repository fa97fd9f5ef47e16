import { useT } from '../i18n'
import type { OutgoingMessage } from '../flow-definition'

/**
 * The buttons a message shows the contact, drawn on its node: reply buttons by title, a list by its
 * button's label and rows, a link by its text. A choice question draws its buttons as exits instead.
 */
export function NodeButtons({ message }: { message: OutgoingMessage | undefined }) {
  const t = useT()
  if (message?.type !== 'interactive') return null
  const interactive = message.interactive
  let titles: string[]
  switch (interactive?.type) {
    case 'button':
      titles = (interactive.action?.buttons ?? []).map((b) => b.title || b.id)
      break
    case 'list': {
      const rows = (interactive.action?.sections ?? []).flatMap((s) => s.rows ?? [])
      titles = [`☰ ${interactive.action?.button || t('node.list')}`, ...rows.map((r) => r.title || r.id)]
      break
    }
    case 'cta_url':
      titles = [`↗ ${interactive.action?.parameters?.display_text ?? ''}`]
      break
    default:
      return null
  }
  if (titles.length === 0) return null
  return (
    <ul className="node-buttons" aria-label={t('node.buttons')}>
      {titles.map((title, i) => (
        <li key={i}>{title}</li>
      ))}
    </ul>
  )
}
