import { Route, Switch } from 'wouter'
import { BoardScreen } from './Board'
import { CardScreen } from './CardForm'
import './kanban.css'
import { PipelineScreen } from './PipelineForm'
import { PipelinesScreen } from './Pipelines'

/** The kanban area: every address under /dashboard/kanban. */
export function KanbanArea() {
  return (
    <Switch>
      <Route path="/" component={PipelinesScreen} />
      <Route path="/new" component={PipelineScreen} />
      <Route path="/:pipelineId/edit" component={PipelineScreen} />
      <Route path="/:pipelineId/cards/new" component={CardScreen} />
      <Route path="/:pipelineId/cards/:cardId" component={CardScreen} />
      <Route path="/:pipelineId" component={BoardScreen} />
    </Switch>
  )
}
