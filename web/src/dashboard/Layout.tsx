import type { ReactNode } from 'react'
import { Link, useRoute } from 'wouter'
import { useT, type MessageKey } from './i18n'
import { PreferenceSwitches } from './components/PreferenceSwitches'
import { useActingWorkspace } from './acting-workspace'
import { useSession, useSignedIn } from './session'

const AREAS: { href: string; label: MessageKey }[] = [
  { href: '/workspaces', label: 'nav.workspaces' },
  { href: '/flows', label: 'nav.flows' },
  { href: '/sessions', label: 'nav.sessions' },
  { href: '/kanban', label: 'nav.kanban' },
  { href: '/webhooks', label: 'nav.webhooks' },
  { href: '/ai-connections', label: 'nav.aiConnections' },
]

/** The signed-in shell: the areas, language and theme, who is signed in, and sign-out. */
export function Layout({ children }: { children: ReactNode }) {
  const t = useT()
  const info = useSignedIn()
  const { signOut } = useSession()
  return (
    <div className="shell">
      <a className="skip" href="#content">
        {t('app.skip')}
      </a>
      <header className="topbar">
        <span className="brand">{t('app.title')}</span>
        <nav aria-label={t('nav.label')} className="areas">
          {AREAS.map((area) => (
            <AreaLink key={area.href} href={area.href} label={t(area.label)} />
          ))}
          <a href="/docs" target="_blank" rel="noreferrer">
            {t('nav.apiReference')}
          </a>
        </nav>
        <div className="topbar-end">
          <PreferenceSwitches />
          <WorkspaceSwitcher />
          <span className="who" title={info.apiKeyId}>
            {t('session.signedInAs', { role: t(`session.role.${info.role}`) })}
          </span>
          <button type="button" className="secondary" onClick={() => void signOut()}>
            {t('session.signOut')}
          </button>
        </div>
      </header>
      <main id="content" tabIndex={-1}>
        {children}
      </main>
    </div>
  )
}

/** The workspace every screen works in; an organization-admin key's session may choose another. */
function WorkspaceSwitcher() {
  const t = useT()
  const info = useSignedIn()
  const { workspaceId, choose, workspaces } = useActingWorkspace()
  const listed = workspaces.data ?? []
  const current = listed.find((workspace) => workspace.id === workspaceId)
  if (info.role !== 'organization-admin' || listed.length === 0) {
    return <span className="who">{t('session.workspace', { name: current?.name ?? `…${workspaceId.slice(-8)}` })}</span>
  }
  return (
    <label className="compact">
      <span>{t('session.workspaceSwitch')}</span>
      <select value={workspaceId} onChange={(event) => choose(event.target.value)}>
        {listed.map((workspace) => (
          <option key={workspace.id} value={workspace.id}>
            {workspace.name}
          </option>
        ))}
        {!current && <option value={workspaceId}>…{workspaceId.slice(-8)}</option>}
      </select>
    </label>
  )
}

function AreaLink({ href, label }: { href: string; label: string }) {
  const [active] = useRoute(`${href}/*?`)
  return (
    <Link href={href} className={active ? 'active' : undefined} aria-current={active ? 'page' : undefined}>
      {label}
    </Link>
  )
}
