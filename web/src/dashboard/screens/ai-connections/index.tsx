import { Route, Switch } from 'wouter'
import '../workspaces/workspaces.css'
import { AiConnectionsScreen } from './AiConnectionsScreen'
import './ai-connections.css'

/** The AI connections area: every address under /dashboard/ai-connections. */
export function AiConnectionsArea() {
  return (
    <Switch>
      <Route path="/" component={AiConnectionsScreen} />
    </Switch>
  )
}
