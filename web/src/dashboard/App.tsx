import { useEffect } from 'react'
import { Link, Redirect, Route, Router, Switch, useLocation } from 'wouter'
import { ActingWorkspaceProvider, useActingWorkspace } from './acting-workspace'
import { Loading } from './components/ui'
import { Layout } from './Layout'
import { useT } from './i18n'
import { AiConnectionsArea } from './screens/ai-connections'
import { FlowsArea } from './screens/flows'
import { KanbanArea } from './screens/kanban'
import { SessionsArea } from './screens/sessions'
import { SignIn } from './screens/SignIn'
import { WebhooksArea } from './screens/webhooks'
import { WorkspacesArea } from './screens/workspaces'
import { useSession } from './session'

/** Every address of the dashboard is under /dashboard; signed out, each one shows the sign-in first. */
export function App() {
  return (
    <Router base="/dashboard">
      <Screens />
    </Router>
  )
}

function Screens() {
  const { state } = useSession()
  const [location] = useLocation()
  const t = useT()
  useEffect(() => {
    document.title = t('app.title')
  }, [t])

  if (state.name === 'loading') return <Loading />
  if (state.name === 'signed-out') return <SignIn expired={state.expired} />
  if (location === '/sign-in') return <Redirect to="/workspaces" replace />
  return (
    <ActingWorkspaceProvider>
      <SignedInScreens />
    </ActingWorkspaceProvider>
  )
}

function SignedInScreens() {
  // Another workspace chosen: every screen starts over in it.
  const { workspaceId } = useActingWorkspace()
  return (
    <Layout>
      <Switch key={workspaceId}>
        <Route path="/">
          <Redirect to="/workspaces" replace />
        </Route>
        <Route path="/workspaces" nest>
          <WorkspacesArea />
        </Route>
        <Route path="/flows" nest>
          <FlowsArea />
        </Route>
        <Route path="/sessions" nest>
          <SessionsArea />
        </Route>
        <Route path="/kanban" nest>
          <KanbanArea />
        </Route>
        <Route path="/webhooks" nest>
          <WebhooksArea />
        </Route>
        <Route path="/ai-connections" nest>
          <AiConnectionsArea />
        </Route>
        <Route>
          <NotFound />
        </Route>
      </Switch>
    </Layout>
  )
}

function NotFound() {
  const t = useT()
  return (
    <section>
      <h1>{t('notFound.title')}</h1>
      <Link href="/workspaces">{t('notFound.back')}</Link>
    </section>
  )
}
