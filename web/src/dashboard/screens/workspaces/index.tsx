import { Redirect, Route, Switch } from 'wouter'
import { WorkspaceScreen } from './Workspace'
import { WorkspacesList } from './WorkspacesList'
import './workspaces.css'

/** The workspaces area: every address under /dashboard/workspaces. */
export function WorkspacesArea() {
  return (
    <Switch>
      <Route path="/" component={WorkspacesList} />
      <Route path="/:id/:tab" component={WorkspaceScreen} />
      <Route path="/:id">{(params) => <Redirect to={`/${params.id}/general`} replace />}</Route>
    </Switch>
  )
}
