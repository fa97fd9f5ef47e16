import { ErrorNotice } from '../../components/ui'

/** A failed submit's message when the form could place none of it on a field. */
export function UnplacedError({ error, placed }: { error: unknown; placed: Record<string, string> }) {
  if (error === undefined || Object.keys(placed).length > 0) return null
  return <ErrorNotice error={error} />
}
