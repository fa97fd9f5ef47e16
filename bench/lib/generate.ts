// Data at scale for benchmarks 4 (rebuild) and 5 (lists), generated in SQL.
//
// - Tenants: 100 workspaces of one organization, each with a workspace API key and a kanban
//   pipeline, created through the API (real commands, real events, real read models).
// - Events (benchmark 4): one real session (start, five messages, their turns, the last one
//   completing it) and one real card (created, updated, moved) are made through the API; their
//   stored events are the templates. `INSERT … SELECT` over generate_series multiplies them: each
//   copy gets new ids (the last 12 hex digits of every id of the session or card replaced by the
//   copy's number, so message ids stay paired between MessageReceived and TurnCompleted), its
//   workspace (and pipeline, stages, fields) among the 100, its times shifted, and a shape chosen
//   by its number: running (stopped after 0–4 answered messages), completed (the whole template),
//   timed out (a SessionExpired after 0–4 messages) or failed (the last turn's status `error`).
//   The payloads are otherwise the real ones, so the projections take them unchanged.
// - Read models (benchmark 5): rows inserted straight into `session_logs` and `kanban_cards`.
//
// The gap rule: generated events take the default transaction_id (the inserting transaction's own
// xid), so they are ordered before any later append and visible once the insert commits.

import pg from 'pg'
import { Api, echoFlow, inParallel } from './api.js'
import type { BenchDatabase } from './db.js'
import { sleep } from './processes.js'

export interface TenantPipeline {
  id: string
  stageIds: string[]
  /** Field ids by role: company (text), amount (currency), seats (number), plan (select). */
  fields: { company: string; amount: string; seats: string; plan: string }
}

export interface Tenant {
  workspaceId: string
  apiKey: string
  pipeline: TenantPipeline
}

const ZONES = ['America/Sao_Paulo', 'Europe/Lisbon', 'UTC', 'America/New_York', 'Asia/Tokyo']

export const pipelineBody = {
  name: 'Sales',
  stages: ['New', 'Qualified', 'Proposal', 'Won', 'Lost'].map((name, order) => ({ name, order })),
  fields: [
    { name: 'Company', type: 'text', required: false, order: 0 },
    { name: 'Amount', type: 'currency', currency: 'BRL', order: 1 },
    { name: 'Seats', type: 'number', order: 2 },
    { name: 'Plan', type: 'select', options: ['basic', 'pro', 'enterprise'], order: 3 },
  ],
}

async function createPipeline(api: Api): Promise<TenantPipeline> {
  const p = await api.call<{ id: string; stages: { id: string; order: number }[]; fields: { id: string; name: string }[] }>('POST', '/v1/kanban/pipelines', 201, pipelineBody)
  const field = (name: string) => p.fields.find((f) => f.name === name)!.id
  return {
    id: p.id,
    stageIds: [...p.stages].sort((a, b) => a.order - b.order).map((s) => s.id),
    fields: { company: field('Company'), amount: field('Amount'), seats: field('Seats'), plan: field('Plan') },
  }
}

/**
 * `count` workspaces (the bootstrap one first), each with a workspace key and a pipeline. The
 * service must run with WEBHOOK_ALLOWED_PRIVATE_CIDRS=127.0.0.1/32 (the keys' callback is local).
 */
export async function createTenants(admin: Api, count: number): Promise<Tenant[]> {
  const me = await admin.call<{ content: { id: string; name: string }[] }>('GET', '/v1/workspaces?size=100', 200)
  const first = me.content[0]!.id
  await inParallel(count - 1, 4, (i) => admin.call('POST', '/v1/workspaces', 201, { name: `Tenant ${i + 1}`, timezone: ZONES[i % ZONES.length] }))
  const ids: string[] = []
  for (let page = 0; ids.length < count; page++) {
    const listed = await admin.call<{ content: { id: string }[] }>('GET', `/v1/workspaces?size=100&page=${page}`, 200)
    if (listed.content.length === 0) break
    ids.push(...listed.content.map((w) => w.id).filter((id) => id !== first))
  }
  const workspaceIds = [first, ...ids].slice(0, count)
  return inParallel(workspaceIds.length, 4, async (i) => {
    const workspaceId = workspaceIds[i]!
    const apiKey =
      i === 0
        ? admin.apiKey
        : (await admin.call<{ apiKey: string }>('POST', '/v1/api-keys', 201, { name: `tenant ${i}`, callbackUrl: 'https://127.0.0.1:9/hooks', workspaceId, role: 'workspace' })).apiKey
    return { workspaceId, apiKey, pipeline: await createPipeline(new Api(admin.base, apiKey)) }
  })
}

async function waitForEvents(db: BenchDatabase, type: string, atLeast: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const { rows } = await db.query<{ n: string }>('select count(*) as n from events where event_type = $1', [type])
    if (Number(rows[0]!.n) >= atLeast) return
    if (Date.now() > deadline) throw new Error(`only ${rows[0]!.n} ${type} events after ${timeoutMs} ms`)
    await sleep(100)
  }
}

/** Makes the template session and card through the API; returns their stream ids. */
export async function recordTemplates(admin: Api, db: BenchDatabase, tenant: Tenant): Promise<{ sessionStream: string; cardStream: string }> {
  await admin.call('POST', '/v1/variables', 201, { name: 'said', type: 'string' })
  const flow = await admin.call<{ id: string }>('POST', '/v1/flows', 201, { name: 'Echo', definition: echoFlow })
  const { sessionId } = await admin.call<{ sessionId: string }>('POST', `/v1/sessions/flows/${flow.id}/create`, 201, { variables: { said: '' } })
  // One message at a time, each after its turn: the engine answers in order.
  const texts = ['hello', 'I would like a quote', 'for 12 seats', 'the pro plan, please', 'bye']
  for (let i = 0; i <= texts.length; i++) {
    await waitForEvents(db, 'TurnCompleted', i + 1, 30_000)
    if (i < texts.length) await admin.call('POST', `/v1/sessions/${sessionId}/message`, 202, { type: 'text', text: { body: texts[i] } })
  }
  const p = tenant.pipeline
  const card = await admin.call<{ id: string }>('POST', `/v1/kanban/pipelines/${p.id}/cards`, 201, {
    stageId: p.stageIds[0],
    values: { [p.fields.company]: 'Silva Comércio Ltda', [p.fields.amount]: 1200.5, [p.fields.seats]: 12, [p.fields.plan]: 'pro' },
    tags: ['lead', 'inbound'],
  })
  await admin.call('PATCH', `/v1/kanban/cards/${card.id}`, 200, { values: { [p.fields.amount]: 1490.9 }, tags: ['lead', 'inbound', 'vip'] })
  await admin.call('PATCH', `/v1/kanban/cards/${card.id}`, 200, { stageId: p.stageIds[1] })
  return { sessionStream: `session-${sessionId}`, cardStream: `card-${card.id}` }
}

const TIME_KEYS = ['startedAt', 'expiresAt', 'receivedAt', 'completedAt', 'expiredAt', 'createdAt', 'updatedAt', 'movedAt', 'deletedAt']

/** Helpers the generating statements use; created in the bench database only. */
async function createHelpers(db: BenchDatabase, tenants: Tenant[]): Promise<void> {
  await db.query(`
    create or replace function bench_shift_times(data jsonb, shift interval) returns jsonb language sql immutable as $$
      select data || coalesce((
        select jsonb_object_agg(k, to_char(((data ->> k)::timestamptz + shift) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
        from unnest(array['${TIME_KEYS.join("','")}']) as k where data ? k and jsonb_typeof(data -> k) = 'string'
      ), '{}'::jsonb)
    $$`)
  // Knuth's multiplicative hash of n into [0, 1): deterministic "random" choices per copy.
  await db.query(`create or replace function bench_unit(n bigint, salt bigint) returns double precision language sql immutable as $$
      select (((n + salt) * 2654435761) % 4294967296)::double precision / 4294967296 $$`)
  // Log-uniform pick of a tenant: tenant k gets a share of about log((k+2)/(k+1)) / log(100) (Zipf-like:
  // the first workspace about 15%, the last 0.2%), as tenants of a SaaS are.
  await db.query(`create or replace function bench_tenant(n bigint) returns int language sql immutable as $$
      select least(${tenants.length - 1}, greatest(0, floor(exp(bench_unit(n, 7) * ln(${tenants.length}))) - 1))::int $$`)
  await db.query('create table bench_tenants (idx int primary key, workspace_id uuid, pipeline_id uuid, stages uuid[], company text, amount text, seats text, plan text)')
  for (const [idx, t] of tenants.entries()) {
    await db.query('insert into bench_tenants values ($1, $2, $3, $4, $5, $6, $7, $8)', [
      idx,
      t.workspaceId,
      t.pipeline.id,
      t.pipeline.stageIds,
      t.pipeline.fields.company,
      t.pipeline.fields.amount,
      t.pipeline.fields.seats,
      t.pipeline.fields.plan,
    ])
  }
}

/** One connection for a generating job, with room to sort in memory and without waiting for each commit's flush. */
async function generatingSession<T>(db: BenchDatabase, work: (query: BenchDatabase['query']) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: db.url })
  await client.connect()
  try {
    await client.query("set work_mem = '512MB'")
    await client.query('set synchronous_commit = off')
    return await work((text, values) => client.query(text, values))
  } finally {
    await client.end()
  }
}

/**
 * VACUUM ANALYZE, again until the visibility map covers the table: a transaction open elsewhere on
 * the server while it runs keeps the new rows from being marked visible to all, and then every
 * index-only scan (deep pages) reads the table too, and the planner avoids them.
 */
async function vacuumUntilAllVisible(query: BenchDatabase['query'], table: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await query(`vacuum analyze ${table}`)
    const { rows } = await query<{ visible: string; pages: string }>('select relallvisible as visible, relpages as pages from pg_class where oid = $1::regclass', [table])
    const [visible, pages] = [Number(rows[0]!.visible), Number(rows[0]!.pages)]
    if (visible >= pages * 0.99) return
    if (attempt === 10) {
      process.stdout.write(`  warning: ${table}: ${visible} of ${pages} pages all-visible after ${attempt} vacuums (a transaction open elsewhere?)\n`)
      return
    }
    await new Promise((resolve) => setTimeout(resolve, 1000))
  }
}

export interface GeneratedEvents {
  sessions: number
  cards: number
  generatedEvents: number
  totalEvents: number
  seconds: number
  byType: Record<string, number>
}

/**
 * Multiplies the template streams until the events table holds about `targetEvents` events:
 * `sessionShare` of them in session streams (about 8.25 events a session), the rest in card
 * streams (2 a card).
 */
export async function generateEvents(
  db: BenchDatabase,
  tenants: Tenant[],
  templates: { sessionStream: string; cardStream: string },
  targetEvents: number,
  sessionShare = 0.8,
  onProgress: (text: string) => void = () => {},
): Promise<GeneratedEvents> {
  return generatingSession(db, async (q) => {
    const started = Date.now()
    await createHelpers(db, tenants)
    const { rows: existing } = await db.query<{ n: string }>('select count(*) as n from events')
    const room = Math.max(0, targetEvents - Number(existing[0]!.n))
    const sessions = Math.round((room * sessionShare) / 8.25)
    const cards = Math.round((room * (1 - sessionShare)) / 2)
    // Template rows: event order, type, payload text and what to replace in it.
    await q(`create table bench_template as
      select stream_id, stream_revision as idx, event_type, data::text as data, metadata::text as metadata, created_at
      from events where stream_id in ($1, $2)`, [templates.sessionStream, templates.cardStream])
    const { rows: ids } = await db.query<{ kind: string; ids: string[] }>(
      `select case when stream_id = $1 then 'session' else 'card' end as kind,
         array(select distinct m[1] from regexp_matches(string_agg(data || metadata, ' '), '([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})', 'g') as m) as ids
       from bench_template group by stream_id`,
      [templates.sessionStream],
    )
    const t0 = tenants[0]!
    // Ids that stay as they are: tenant-wide ones (replaced by the copy's tenant) and the flow's.
    const shared = new Set([t0.workspaceId, t0.pipeline.id, ...t0.pipeline.stageIds, ...Object.values(t0.pipeline.fields)])
    const { rows: fixed } = await db.query<{ id: string }>(
      `select distinct x as id from bench_template, lateral (values (data::jsonb #>> '{organizationId}'), (data::jsonb #>> '{flowId}'), (data::jsonb #>> '{apiKeyId}')) v(x) where x is not null`,
    )
    for (const { id } of fixed) shared.add(id)
    const own = (kind: string) => (ids.find((r) => r.kind === kind)?.ids ?? []).filter((id) => !shared.has(id))
    // A pattern matching every own id of the stream by its first 24 characters.
    const pattern = (kind: string) => `(${own(kind).map((id) => id.slice(0, 24)).join('|')})[0-9a-f]{12}`
    const sessionPattern = pattern('session')
    const cardPattern = pattern('card')
    const { rows: tplStart } = await db.query<{ s: string; c: string }>(
      `select (select (data::jsonb ->> 'startedAt') from bench_template where stream_id = $1 and idx = 0) as s,
              (select (data::jsonb ->> 'createdAt') from bench_template where stream_id = $2 and idx = 0) as c`,
      [templates.sessionStream, templates.cardStream],
    )
    const { rows: tplLen } = await db.query<{ n: string }>('select count(*) as n from bench_template where stream_id = $1', [templates.sessionStream])
    const fullLength = Number(tplLen[0]!.n)
    const tenantReplace = (expr: string) =>
      [t0.workspaceId, t0.pipeline.id, ...t0.pipeline.stageIds.map((_, i) => i), 'company', 'amount', 'seats', 'plan'].reduce<string>((acc, what, i) => {
        if (i === 0) return `replace(${acc}, '${t0.workspaceId}', t.workspace_id::text)`
        if (i === 1) return `replace(${acc}, '${t0.pipeline.id}', t.pipeline_id::text)`
        if (typeof what === 'number') return `replace(${acc}, '${t0.pipeline.stageIds[what]}', t.stages[${what + 1}]::text)`
        const field = t0.pipeline.fields[what as keyof TenantPipeline['fields']]
        return `replace(${acc}, '${field}', t.${what})`
      }, expr)

    // Sessions, in chunks of their own transactions; within a chunk the sessions interleave (event
    // k of every session, then event k+1, …) as concurrent conversations do.
    const chunk = 12_000
    for (let from = 1; from <= sessions; from += chunk) {
      const to = Math.min(sessions, from + chunk - 1)
      // Shape by n: category 0–39 running, 40–74 completed, 75–89 timed out, 90–99 failed.
      await q(
        `with s as (
           select n, lpad(to_hex(n), 12, '0') as suffix, (n * 7919) % 100 as cat,
             date_trunc('millisecond', now() - interval '2 hours' - bench_unit(n, 3) * interval '90 days') as start, bench_tenant(n) as tenant
           from generate_series($1::bigint, $2::bigint) as n
         ), plan as (
           select s.*, case when cat between 40 and 74 then ${fullLength} else 2 + 2 * (n % 5)::int end as len,
             start - $3::timestamptz as shift
           from s
         )
         insert into events (event_id, stream_id, stream_revision, event_type, data, metadata, created_at)
         select gen_random_uuid(), regexp_replace(tpl.stream_id, $4, '\\1' || p.suffix), tpl.idx, tpl.event_type,
           (case when p.cat >= 90 and tpl.idx = p.len - 1
             then jsonb_set(bench_shift_times(${tenantReplace(`regexp_replace(tpl.data, $4, '\\1' || p.suffix, 'g')`)}::jsonb, p.shift), '{output,status}', '"error"')
             else bench_shift_times(${tenantReplace(`regexp_replace(tpl.data, $4, '\\1' || p.suffix, 'g')`)}::jsonb, p.shift) end),
           regexp_replace(tpl.metadata, $4, '\\1' || p.suffix, 'g')::jsonb,
           tpl.created_at + p.shift
         from plan p join bench_tenants t on t.idx = p.tenant
         join bench_template tpl on tpl.stream_id = $5 and tpl.idx < p.len
         order by tpl.idx, p.n`,
        [from, to, tplStart[0]!.s, sessionPattern, templates.sessionStream],
      )
      // Timed-out sessions: the sweeper's SessionExpired, at their expiry.
      await q(
        `with s as (
           select n, lpad(to_hex(n), 12, '0') as suffix, 2 + 2 * (n % 5)::int as len
           from generate_series($1::bigint, $2::bigint) as n where (n * 7919) % 100 between 75 and 89
         )
         insert into events (event_id, stream_id, stream_revision, event_type, data, metadata, created_at)
         select gen_random_uuid(), e.stream_id, s.len, 'SessionExpired',
           jsonb_build_object('sessionId', e.data ->> 'sessionId', 'expiredAt', e.data ->> 'expiresAt'), '{}'::jsonb, (e.data ->> 'expiresAt')::timestamptz
         from s join events e on e.stream_id = regexp_replace($3, $4, '\\1' || s.suffix) and e.stream_revision = 0
         order by s.n`,
        [from, to, templates.sessionStream, sessionPattern],
      )
      onProgress(`sessions ${to}/${sessions}`)
    }
    // Cards: created, then (two in three) updated, then (one in three) moved.
    for (let from = 1; from <= cards; from += chunk * 4) {
      const to = Math.min(cards, from + chunk * 4 - 1)
      await q(
        `with s as (
           select n, lpad(to_hex(n), 12, '0') as suffix, 1 + (n % 3)::int as len,
             date_trunc('millisecond', now() - interval '2 hours' - bench_unit(n, 11) * interval '365 days') - $3::timestamptz as shift, bench_tenant(n + 17) as tenant
           from generate_series($1::bigint, $2::bigint) as n
         )
         insert into events (event_id, stream_id, stream_revision, event_type, data, metadata, created_at)
         select gen_random_uuid(), regexp_replace(tpl.stream_id, $4, '\\1' || s.suffix), tpl.idx, tpl.event_type,
           bench_shift_times(${tenantReplace(`regexp_replace(tpl.data, $4, '\\1' || s.suffix, 'g')`)}::jsonb, s.shift),
           regexp_replace(tpl.metadata, $4, '\\1' || s.suffix, 'g')::jsonb,
           tpl.created_at + s.shift
         from s join bench_tenants t on t.idx = s.tenant
         join bench_template tpl on tpl.stream_id = $5 and tpl.idx < s.len
         order by tpl.idx, s.n`,
        [from, to, tplStart[0]!.c, cardPattern, templates.cardStream],
      )
      onProgress(`cards ${to}/${cards}`)
    }
    await q(`insert into streams (stream_id, revision) select stream_id, max(stream_revision) from events group by stream_id
                    on conflict (stream_id) do update set revision = excluded.revision`)
    await q('drop table bench_template')
    await q('vacuum analyze events')
    await q('vacuum analyze streams')
    const { rows: types } = await db.query<{ event_type: string; n: string }>('select event_type, count(*) as n from events group by event_type order by 2 desc')
    const byType = Object.fromEntries(types.map((r) => [r.event_type, Number(r.n)]))
    const totalEvents = Object.values(byType).reduce((a, b) => a + b, 0)
    return { sessions, cards, generatedEvents: totalEvents - Number(existing[0]!.n), totalEvents, seconds: (Date.now() - started) / 1000, byType }
  })
}

export const TAGS = ['vip', 'lead', 'customer', 'trial', 'partner', 'hot', 'cold', 'renewal', 'upsell', 'support', 'billing', 'onboarding', 'referral', 'event', 'webinar', 'inbound', 'outbound', 'churn-risk', 'enterprise', 'smb']
const FIRST = ['Silva', 'Santos', 'Oliveira', 'Souza', 'Lima', 'Pereira', 'Costa', 'Rodrigues', 'Almeida', 'Nascimento', 'Ferreira', 'Araujo', 'Ribeiro', 'Carvalho', 'Gomes', 'Martins', 'Rocha', 'Barbosa', 'Teixeira', 'Moreira', 'Mendes', 'Cardoso', 'Vieira', 'Freitas', 'Campos']
const SECOND = ['Comércio', 'Tecnologia', 'Logística', 'Alimentos', 'Consultoria', 'Engenharia', 'Saúde', 'Educação', 'Transportes', 'Imóveis', 'Turismo', 'Agro', 'Energia', 'Varejo', 'Serviços']
const LEGAL = ['Ltda', 'S.A.', 'ME', 'EIRELI']

const sqlArray = (values: string[]) => `array[${values.map((v) => `'${v.replace(/'/g, "''")}'`).join(',')}]`

/**
 * Read-model rows straight into `session_logs` and `kanban_cards` (benchmark 5), in time order as
 * they would have arrived: `sessionLogs` logs over the last 180 days and `cards` cards over the
 * last 365, spread over the tenants like the events above. Card values carry a company name (one
 * of 25 × 15 words, so a word matches a few per cent of the cards) and a code `BX-<n>` (unique).
 */
export async function generateReadModels(
  db: BenchDatabase,
  tenants: Tenant[],
  organizationId: string,
  flowId: string,
  counts: { sessionLogs: number; cards: number },
  onProgress: (text: string) => void = () => {},
): Promise<{ seconds: number }> {
  return generatingSession(db, async (q) => {
    const started = Date.now()
    await createHelpers(db, tenants)
    const chunk = 200_000
    for (let from = 1; from <= counts.sessionLogs; from += chunk) {
      const to = Math.min(counts.sessionLogs, from + chunk - 1)
      // Chunks go oldest first, and rows in a chunk in time order.
      await q(
        `with s as (
           select n, (n * 7919) % 100 as cat, bench_tenant(n) as tenant,
             date_trunc('millisecond', now() - ((${counts.sessionLogs} - n)::double precision / ${counts.sessionLogs}) * interval '180 days' - bench_unit(n, 5) * interval '10 minutes') as started
           from generate_series($1::bigint, $2::bigint) as n
         )
         insert into session_logs (id, workspace_id, organization_id, flow_id, flow_version, external_id, status, warnings, started_at, expires_at, finished_at)
         select gen_random_uuid(), t.workspace_id, $3::uuid, $4::uuid, 1 + (n % 3)::int,
           case when n % 10 = 0 then null else '+55' || lpad(((n * 2654435761) % 100000000000)::text, 11, '0') end,
           st.status, case when n % 10 < 9 then 0 else 1 + (n % 3)::int end, started, started + interval '1 day',
           case when st.status = 'running' then null else started + (1 + n % 30) * interval '1 minute' end
         from s join bench_tenants t on t.idx = s.tenant,
         lateral (select case
           when started > now() - interval '1 day' and cat < 60 then 'running'
           when cat < 70 then 'completed' when cat < 88 then 'timeout' when cat < 96 then 'error' else 'running' end as status) st
         order by started`,
        [from, to, organizationId, flowId],
      )
      onProgress(`session logs ${to}/${counts.sessionLogs}`)
    }
    for (let from = 1; from <= counts.cards; from += chunk) {
      const to = Math.min(counts.cards, from + chunk - 1)
      await q(
        `with s as (
           select n, bench_tenant(n + 17) as tenant,
             date_trunc('millisecond', now() - ((${counts.cards} - n)::double precision / ${counts.cards}) * interval '365 days' - bench_unit(n, 13) * interval '10 minutes') as created
           from generate_series($1::bigint, $2::bigint) as n
         )
         insert into kanban_cards (id, pipeline_id, workspace_id, stage_id, session_id, tags, field_values, created_at, moved_at)
         select gen_random_uuid(), t.pipeline_id, t.workspace_id,
           t.stages[case when n % 20 < 8 then 1 when n % 20 < 13 then 2 when n % 20 < 16 then 3 when n % 20 < 18 then 4 else 5 end],
           case when n % 10 < 3 then gen_random_uuid() end,
           case when n % 4 = 0 then '{}'::text[] else array_remove(array[
             (${sqlArray(TAGS)})[1 + (n % 5)::int],
             case when n % 3 = 0 then (${sqlArray(TAGS)})[6 + (n % 7)::int] end,
             case when n % 11 = 0 then (${sqlArray(TAGS)})[13 + (n % 8)::int] end], null) end,
           jsonb_build_object(
             t.company, (${sqlArray(FIRST)})[1 + (n * 31 % 25)::int] || ' ' || (${sqlArray(SECOND)})[1 + (n * 17 % 15)::int] || ' ' || (${sqlArray(LEGAL)})[1 + (n % 4)::int] || ' BX-' || n,
             t.amount, ((n * 7919) % 2000000) / 100.0,
             t.seats, 1 + n % 200,
             t.plan, (array['basic','pro','enterprise'])[1 + (n % 3)::int]),
           created, created + (n % 72) * interval '1 hour'
         from s join bench_tenants t on t.idx = s.tenant
         order by created`,
        [from, to],
      )
      onProgress(`cards ${to}/${counts.cards}`)
    }
    // With their counts and sums, kept by triggers as the rows went in (migration 0013).
    for (const table of ['session_logs', 'kanban_cards', 'session_log_counts', 'session_log_day_counts', 'kanban_card_counts', 'kanban_card_sums']) await vacuumUntilAllVisible(q, table)
    return { seconds: (Date.now() - started) / 1000 }
  })
}
