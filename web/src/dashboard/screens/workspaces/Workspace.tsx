import { Link, useParams } from 'wouter'
import { useAsync } from '../../components/async'
import { ErrorNotice, LinkTabs, Loading, PageHeader } from '../../components/ui'
import { useT, type MessageKey } from '../../i18n'
import { useSignedIn } from '../../session'
import { ApiKeysTab } from './ApiKeysTab'
import { EmbedTab } from './EmbedTab'
import { GeneralTab } from './GeneralTab'
import { OtherWorkspaceTab } from './OtherWorkspace'
import type { Workspace } from './api-types'
import { findWorkspace } from './lookups'
import { SectorsTab } from './SectorsTab'
import { VariablesTab } from './VariablesTab'

const TABS = ['general', 'api-keys', 'embed', 'sectors', 'variables'] as const
type Tab = (typeof TABS)[number]

const TAB_LABELS: Record<Tab, MessageKey> = {
  general: 'workspaces.tab.general',
  'api-keys': 'workspaces.tab.apiKeys',
  embed: 'workspaces.tab.embed',
  sectors: 'workspaces.tab.sectors',
  variables: 'workspaces.tab.variables',
}

const isTab = (tab: string | undefined): tab is Tab => TABS.some((known) => known === tab)

/** One workspace, its tabs as addresses: /:id/general, /:id/api-keys, /:id/embed, /:id/sectors, /:id/variables. */
export function WorkspaceScreen() {
  const t = useT()
  const { id = '', tab } = useParams<{ id: string; tab: string }>()
  const workspace = useAsync(() => findWorkspace(id), [id])

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
  return (
    <section>
      <p className="ws-breadcrumb">
        <Link href="/">{t('workspaces.backToList')}</Link>
      </p>
      <PageHeader title={workspace.data.name} />
      <LinkTabs label={t('workspaces.tabs', { name: workspace.data.name })} tabs={TABS.map((name) => ({ href: `/${id}/${name}`, label: t(TAB_LABELS[name]) }))} />
      <TabContent tab={tab} workspace={workspace.data} />
    </section>
  )
}

function TabContent({ tab, workspace }: { tab: Tab; workspace: Workspace }) {
  const info = useSignedIn()
  // The API keeps sectors and variables in the signed-in key's own workspace only.
  if ((tab === 'sectors' || tab === 'variables') && workspace.id !== info.workspaceId) return <OtherWorkspaceTab tab={tab} workspace={workspace} />
  switch (tab) {
    case 'general':
      return <GeneralTab workspace={workspace} />
    case 'api-keys':
      return <ApiKeysTab workspace={workspace} />
    case 'embed':
      return <EmbedTab workspace={workspace} />
    case 'sectors':
      return <SectorsTab />
    case 'variables':
      return <VariablesTab />
  }
}
