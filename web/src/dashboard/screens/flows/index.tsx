import { Route, Switch } from 'wouter'
import { AnalyticsScreen } from './Analytics'
import { EditorScreen } from './EditorScreen'
import { FlowScreen } from './FlowPage'
import { FlowsListScreen } from './FlowsList'
import './flows.css'

/** The flows area: every address under /dashboard/flows. */
export function FlowsArea() {
  return (
    <Switch>
      <Route path="/" component={FlowsListScreen} />
      <Route path="/:id/edit" component={EditorScreen} />
      <Route path="/:id/analytics" component={AnalyticsScreen} />
      <Route path="/:id" component={FlowScreen} />
    </Switch>
  )
}
