import type { DeliveryStatus } from '../store/tables/webhook-deliveries.js'
import { DESTINATION_STATES, type DestinationState } from '../store/tables/webhook-destinations.js'
import { listDeliveries, retryDelivery, type DeliveryView } from '../webhooks/deliveries.js'
import { listDestinations, type DestinationView } from '../webhooks/destinations.js'
import type { CliContext } from './main.js'
import { asOperator, printJson, printTable } from './operator.js'
import { parseAction, positiveIntegerArgument, UsageError, uuidArgument } from './usage.js'

const STATUSES: readonly DeliveryStatus[] = ['pending', 'delivered', 'failed', 'dead', 'skipped']

const HELP = `Usage:
  flowd deliveries list [--organization ID] [--workspace ID] [--session ID] [--status S] [--limit N] [--json]
  flowd deliveries retry ID [--json]
  flowd deliveries destinations [--organization ID] [--workspace ID] [--state S] [--limit N] [--json]

Webhook deliveries as the operator, across every organization (narrow with --organization or
--workspace), the same data as GET /v1/webhooks/deliveries.

list     newest first, --limit of them (default 20, at most 1000). --status is one of
         ${STATUSES.join(', ')}. --json: an array of deliveries, each with its attempts.
retry    queues a dead or delivered delivery again, due at once, with the same webhook-id, or
         brings a failed one's next attempt forward to now; the running service sends it (on the
         embedded database: at its next start). --json: the delivery, now pending (or failed, due now).
destinations
         the destinations (a callback URL's origin within a workspace) that have failed, failing
         first: since when, the last error, the deliveries held, the next probe (docs/webhooks.md).
         --state is one of ${DESTINATION_STATES.join(', ')}; --limit as for list.

Exit codes: 0 done, 1 failed (e.g. database unreachable), 2 usage error, 3 no such delivery,
4 the delivery's state refuses a retry (pending or being sent: already on its way; skipped: no callback URL).`

export async function deliveriesCommand(cli: CliContext): Promise<number> {
  const parsed = parseAction(
    cli.args,
    {
      organization: { type: 'string' },
      workspace: { type: 'string' },
      session: { type: 'string' },
      status: { type: 'string' },
      state: { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean' },
    },
    HELP,
  )
  if (parsed.exit !== undefined) return parsed.exit
  const { action, values, rest } = parsed
  if (action !== 'list' && action !== 'retry' && action !== 'destinations') throw new UsageError(`unknown action '${action}'\n\n${HELP}`)

  if (action !== 'destinations' && values.state !== undefined) throw new UsageError(`deliveries ${action} takes no --state`)
  if (action === 'retry') {
    const misplaced = Object.keys(values).filter((option) => option !== 'json')
    if (misplaced.length) throw new UsageError(`deliveries retry takes no ${misplaced.map((o) => `--${o}`).join(', ')}`)
    if (rest.length > 1) throw new UsageError(`unexpected argument '${rest.at(-1)}'`)
    const deliveryId = uuidArgument(rest[0], 'the delivery id', HELP)
    const retried = await asOperator(cli, (backend) => retryDelivery(backend.storage.db, null, deliveryId, new Date()))
    if (values.json) printJson(retried)
    else process.stdout.write(`delivery ${retried.id} is queued again (${retried.status}, due now; attempts so far: ${retried.attemptCount})\n`)
    return 0
  }

  if (rest.length) throw new UsageError(`unexpected argument '${rest[0]}'`)
  const workspaceId = values.workspace === undefined ? null : uuidArgument(values.workspace, '--workspace', HELP)
  const organizationId = values.organization === undefined ? undefined : uuidArgument(values.organization, '--organization', HELP)
  const size = values.limit === undefined ? 20 : positiveIntegerArgument(values.limit, '--limit', 1000)
  if (action === 'destinations') return printDestinations(cli, values, { workspaceId, organizationId, size })
  const status = values.status as DeliveryStatus | undefined
  if (status !== undefined && !STATUSES.includes(status)) throw new UsageError(`--status must be one of ${STATUSES.join(', ')}`)
  const query = {
    workspaceId,
    organizationId,
    sessionId: values.session === undefined ? undefined : uuidArgument(values.session, '--session', HELP),
    status,
    direction: 'DESC' as const,
    page: 0,
    size,
  }
  const { content, totalElements } = await asOperator(cli, (backend) => listDeliveries(backend.storage.db, query))
  if (values.json) {
    printJson(content)
    return 0
  }
  if (content.length === 0) {
    process.stdout.write('no deliveries\n')
    return 0
  }
  printTable(['id', 'status', 'attempts', 'session', 'created', 'last error'], content.map(row))
  if (totalElements > content.length) process.stdout.write(`(${content.length} of ${totalElements}; --limit shows more)\n`)
  return 0
}

const row = (d: DeliveryView): string[] => [d.id, d.status, String(d.attemptCount), d.sessionId, d.createdAt, d.lastError ?? '-']

async function printDestinations(
  cli: CliContext,
  values: { state?: string | undefined; session?: string | undefined; status?: string | undefined; json?: boolean | undefined },
  scope: { workspaceId: string | null; organizationId: string | undefined; size: number },
): Promise<number> {
  if (values.session !== undefined || values.status !== undefined) throw new UsageError('deliveries destinations takes no --session or --status (--state filters it)')
  const state = values.state as DestinationState | undefined
  if (state !== undefined && !DESTINATION_STATES.includes(state)) throw new UsageError(`--state must be one of ${DESTINATION_STATES.join(', ')}`)
  const { content, totalElements } = await asOperator(cli, (backend) =>
    listDestinations(backend.storage.db, { workspaceId: scope.workspaceId, ...(scope.organizationId ? { organizationId: scope.organizationId } : {}), ...(state ? { state } : {}), page: 0, size: scope.size }),
  )
  if (values.json) {
    printJson(content)
    return 0
  }
  if (content.length === 0) {
    process.stdout.write('no destination has failed\n')
    return 0
  }
  printTable(['workspace', 'destination', 'state', 'since', 'held', 'next probe', 'last error'], content.map(destinationRow))
  if (totalElements > content.length) process.stdout.write(`(${content.length} of ${totalElements}; --limit shows more)\n`)
  return 0
}

const destinationRow = (d: DestinationView): string[] => [d.workspaceId, d.destination, d.state, d.failingSince ?? '-', String(d.heldDeliveries), d.nextProbeAt ?? '-', d.lastError ?? '-']
