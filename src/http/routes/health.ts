import { Type, type FastifyPluginAsyncTypebox, type Static } from '@fastify/type-provider-typebox'
import { sql } from 'kysely'
import type { ProjectionStatus } from '../../projections/runtime.js'
import type { AppDeps } from '../app.js'
import type { Tag } from '../openapi.js'

export const openApiTag: Tag = { name: 'health', description: 'Liveness and readiness probes' }

const Check = Type.Object({ name: Type.String(), ok: Type.Boolean(), detail: Type.Optional(Type.String()) })
const Readiness = Type.Object({ statusCode: Type.Integer({ examples: [200] }), status: Type.Literal('ready'), checks: Type.Array(Check) })
/** The spec's error shape, with the checks. */
const NotReady = Type.Object({
  statusCode: Type.Integer({ examples: [503] }),
  status: Type.Literal('not ready'),
  checks: Type.Array(Check),
  message: Type.String({ examples: ['Not ready: projections'] }),
  error: Type.String({ examples: ['Service Unavailable'] }),
})

type CheckResult = Static<typeof Check>

const failed = (error: unknown) => (error instanceof Error ? error.message : 'unreachable')

const projectionsCheck = (statuses: readonly ProjectionStatus[]): CheckResult => {
  const lagging = statuses.filter((s) => !s.caughtUp)
  if (!lagging.length) return { name: 'projections', ok: true }
  return { name: 'projections', ok: false, detail: `behind: ${lagging.map((s) => s.name + (s.lastError ? ` (${s.lastError})` : '')).join(', ')}` }
}

export const routes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    /**
     * The checks. With the log in the database (the Postgres store), the read models' status is one
     * statement that reads the log and the database both, so it answers all three checks.
     */
    const evaluate = async (): Promise<CheckResult[]> => {
      if (deps.store.kind === 'postgres') {
        try {
          const statuses = await deps.readModels.status()
          return [{ name: 'database', ok: true }, { name: 'eventStore', ok: true }, projectionsCheck(statuses)]
        } catch (error) {
          return ['database', 'eventStore', 'projections'].map((name) => ({ name, ok: false, detail: failed(error) }))
        }
      }
      const probe = async (name: string, run: () => Promise<CheckResult | undefined>): Promise<CheckResult> => {
        try {
          return (await run()) ?? { name, ok: true }
        } catch (error) {
          return { name, ok: false, detail: failed(error) }
        }
      }
      return Promise.all([
        probe('database', async () => {
          await sql`select 1`.execute(deps.db)
          return undefined
        }),
        probe('eventStore', async () => {
          await deps.store.ping()
          return undefined
        }),
        probe('projections', async () => projectionsCheck(await deps.readModels.status())),
      ])
    }
    /** A probe arriving while the checks run awaits their answer: probes never multiply the queries. */
    let evaluating: Promise<CheckResult[]> | undefined

    app.get(
      '/healthz',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'getHealth',
          summary: 'The process is up',
          description: 'Answers 200 while the process runs, whatever its dependencies; for a liveness probe.',
          response: { 200: Type.Object({ status: Type.Literal('ok') }) },
        },
      },
      async () => ({ status: 'ok' as const }),
    )

    app.get(
      '/readyz',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'getReadiness',
          summary: 'The database and event store answer, and the read models are caught up',
          description: '200 when the database and the event store answer and every read model has caught up with the log; 503 naming the failing checks otherwise. For a readiness probe.',
          response: { 200: Readiness, 503: NotReady },
        },
      },
      async (_request, reply) => {
        const checks = await (evaluating ??= evaluate().finally(() => {
          evaluating = undefined
        }))
        const ready = checks.every((c) => c.ok)
        if (ready) return { statusCode: 200, status: 'ready' as const, checks }
        return reply.status(503).send({
          statusCode: 503,
          status: 'not ready' as const,
          checks,
          message: 'Not ready: ' + checks.filter((c) => !c.ok).map((c) => c.name).join(', '),
          error: 'Service Unavailable',
        })
      },
    )
  }
