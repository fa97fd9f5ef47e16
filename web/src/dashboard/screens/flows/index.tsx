import { lazy, Suspense } from 'react'
import { Route, Switch } from 'wouter'
import { Loading } from '../../components/ui'
import { EditorScreen } from './EditorScreen'
import { FlowScreen } from './FlowPage'
import { FlowsListScreen } from './FlowsList'
import './flows.css'

// The drop-off drawing brings the flow layout (dagre): loaded when Analytics is opened, not with the first screen.
const AnalyticsScreen = lazy(() => import('./Analytics').then((module) => ({ default: module.AnalyticsScreen })))

/** The flows area: every address under /dashboard/flows. */
export function FlowsArea() {
  return (
    <Switch>
      <Route path="/" component={FlowsListScreen} />
      <Route path="/:id/edit" component={EditorScreen} />
      <Route path="/:id/analytics">
        <Suspense fallback={<Loading />}>
          <AnalyticsScreen />
        </Suspense>
      </Route>
      <Route path="/:id" component={FlowScreen} />
    </Switch>
  )
}
