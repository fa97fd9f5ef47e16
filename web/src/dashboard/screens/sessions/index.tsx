import { Route, Switch } from 'wouter'
import { SessionLogsScreen } from './SessionLogs'
import { SessionScreen } from './SessionPage'
import './sessions.css'

/** The sessions area: every address under /dashboard/sessions. */
export function SessionsArea() {
  return (
    <Switch>
      <Route path="/" component={SessionLogsScreen} />
      <Route path="/:sessionId" component={SessionScreen} />
    </Switch>
  )
}
