import type { ReactNode } from 'react'
import { Link } from 'wouter'
import { api, unwrap } from '../../api'
import { useAsync } from '../../components/async'
import { LinkTabs, PageHeader } from '../../components/ui'
import { useT } from '../../i18n'

/** The flow an address names (`/:id…`), as the API answers it. */
export const useFlow = (id: string) => useAsync(() => unwrap(api.GET('/v1/flows/{id}', { params: { path: { id } } })), [id])

/** A flow screen's heading, back link and tabs (overview, editor, analytics: each an address). */
export function FlowHeader({ id, title, children }: { id: string; title: string; children?: ReactNode }) {
  const t = useT()
  return (
    <>
      <p className="flows-back">
        <Link href="/">← {t('flows.back')}</Link>
      </p>
      <PageHeader title={title}>{children}</PageHeader>
      <LinkTabs
        label={t('flows.tabs')}
        tabs={[
          { href: `/${id}`, label: t('flows.tab.overview') },
          { href: `/${id}/edit`, label: t('flows.tab.editor') },
          { href: `/${id}/analytics`, label: t('flows.tab.analytics') },
        ]}
      />
    </>
  )
}
