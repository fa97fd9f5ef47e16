import { Route, Switch } from 'wouter'
import '../sessions/sessions.css'
import { DeliveriesScreen } from './Deliveries'
import { DeliveryScreen } from './DeliveryPage'
import './webhooks.css'

/** The webhooks area: every address under /dashboard/webhooks. */
export function WebhooksArea() {
  return (
    <Switch>
      <Route path="/" component={DeliveriesScreen} />
      <Route path="/:deliveryId" component={DeliveryScreen} />
    </Switch>
  )
}
