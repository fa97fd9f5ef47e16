import { useEffect } from 'react'
import { Link, useParams } from 'wouter'
import { useActingWorkspace } from '../../acting-workspace'
import { useAsync } from '../../components/async'
import { ErrorNotice, LinkTabs, Loading, PageHeader } from '../../components/ui'
import { useT, type MessageKey } from '../../i18n'
import { ApiKeysTab } from './ApiKeysTab'
import { EmbedTab } from './EmbedTab'
import { GeneralTab } from './GeneralTab'
import type { WorkspaceDetail } from './api-types'
import { findWorkspace } from './lookups'
import { SecretsTab } from './SecretsTab'
import { SectorsTab } from './SectorsTab'
import { VariablesTab } from './VariablesTab'

const TABS = ['general', 'api-keys', 'embed', 'sectors', 'variables', 'secrets'] as const
type Tab = (typeof TABS)[number]

const TAB_LABELS: Record<Tab, MessageKey> = {
  general: 'workspaces.tab.general',
  'api-keys': 'workspaces.tab.apiKeys',
  embed: 'workspaces.tab.embed',
  sectors: 'workspaces.tab.sectors',
  variables: 'workspaces.tab.variables',
  secrets: 'workspaces.tab.secrets',
}

const isTab = (tab: string | undefined): tab is Tab => TABS.some((known) => known === tab)

/** One workspace, its tabs as addresses: /:id/general, /:id/api-keys, /:id/embed, /:id/sectors, /:id/variables, /:id/secrets. */
export function WorkspaceScreen() {
  const t = useT()
  const { id = '', tab } = useParams<{ id: string; tab: string }>()
  const workspace = useAsync(() => findWorkspace(id), [id])
  const acting = useActingWorkspace()
  const found = workspace.data?.id
  // A workspace opened here is the one the screens work in (an admin key's session reaches any of its organization's).
  useEffect(() => {
    if (found && found !== acting.workspaceId) acting.choose(found)
  }, [found, acting])

  if (workspace.error) return <ErrorNotice error={workspace.error} onRetry={workspace.reload} />
  if (!workspace.data && workspace.loading) return <Loading />
  if (!workspace.data || !isTab(tab)) {
    return (
      <section>
        <PageHeader title={t('workspaces.notFound')} />
        <Link href="/">{t('workspaces.backToList')}</Link>
      </section>
    )
  }
  if (workspace.data.id !== acting.workspaceId) return <Loading />
  return (
    <section>
      <p className="ws-breadcrumb">
        <Link href="/">{t('workspaces.backToList')}</Link>
      </p>
      <PageHeader title={workspace.data.name} />
      <LinkTabs label={t('workspaces.tabs', { name: workspace.data.name })} tabs={TABS.map((name) => ({ href: `/${id}/${name}`, label: t(TAB_LABELS[name]) }))} />
      <TabContent tab={tab} workspace={workspace.data} onChanged={workspace.reload} />
    </section>
  )
}

function TabContent({ tab, workspace, onChanged }: { tab: Tab; workspace: WorkspaceDetail; onChanged(): void }) {
  switch (tab) {
    case 'general':
      return <GeneralTab workspace={workspace} onChanged={onChanged} />
    case 'api-keys':
      return <ApiKeysTab workspace={workspace} />
    case 'embed':
      return <EmbedTab workspace={workspace} />
    case 'sectors':
      return <SectorsTab />
    case 'variables':
      return <VariablesTab />
    case 'secrets':
      return <SecretsTab />
  }
}
