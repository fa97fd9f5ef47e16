import t from 'tap'
import { buildTranscript, transcriptMarkdown, type StoredSessionEvent } from '../../src/audit/transcript.js'
import type { InboundMessage, TurnOutput } from '../../src/domain/turn.js'
import { PIPELINE, SECTOR, STAGE_NEW, buttons, chain, context, converse, edge, flow, kanbanMove, message, question, start, text, transfer } from '../helpers/engine.js'

const SESSION = '0190a0b0-0000-7000-8000-000000000001'
const WORKSPACE = '0190a0b0-0000-7000-8000-000000000002'
const FLOW = '0190a0b0-0000-7000-8000-000000000003'
const id = (n: number) => `0190a0b0-0000-7000-8000-${String(n).padStart(12, '0')}`

const plans = flow(
  [
    start(),
    message('hello', text('Hi *there*')),
    question('ask', { prompt: buttons('Which plan?', ['basic', 'Basic'], ['pro', 'Pro']), input: { kind: 'choice' }, maxRetries: 1, retryMessage: text('Please tap a button.') }),
    kanbanMove('lead', { pipelineId: PIPELINE, stageId: STAGE_NEW }),
    message('thanks', text('Thanks!')),
    transfer('human', 'sector', SECTOR),
  ],
  [...chain('start', 'hello', 'ask'), edge('ask', 'lead', 'pro'), ...chain('lead', 'thanks', 'human')],
)

const maybe: InboundMessage = { type: 'text', text: { body: 'maybe' } }
const pro: InboundMessage = { type: 'interactive', interactive: { type: 'button_reply', button_reply: { id: 'pro', title: 'Pro' } } }

/** The stream the worker would have written for this conversation. */
function stream(outputs: TurnOutput[], inbound: InboundMessage[]): StoredSessionEvent[] {
  const events: StoredSessionEvent[] = [
    {
      id: id(100),
      type: 'SessionStarted',
      data: {
        sessionId: SESSION, workspaceId: WORKSPACE, organizationId: id(4), flowId: FLOW, flowVersion: 3, variables: {}, externalId: 'contact-1',
        apiKeyId: id(5), callbackUrl: null, ttlSeconds: 60, messageId: id(10), startedAt: '2026-01-01T10:00:00.000Z', expiresAt: '2026-01-01T10:01:00.000Z',
      },
    },
  ]
  outputs.forEach((output, turn) => {
    const messageId = id(10 + turn)
    if (turn > 0) {
      events.push({
        id: id(200 + turn),
        type: 'MessageReceived',
        data: { sessionId: SESSION, messageId, message: inbound[turn - 1]!, idempotencyKey: null, receivedAt: `2026-01-01T10:00:0${turn}.000Z`, expiresAt: '2026-01-01T10:02:00.000Z' },
      })
    }
    events.push({ id: id(300 + turn), type: 'TurnCompleted', data: { sessionId: SESSION, messageId, output, completedAt: `2026-01-01T10:00:0${turn}.500Z` } })
  })
  return events
}

t.test('the transcript lists what came in and went out, in order, each outgoing entry with its node and flow version', async (t) => {
  const outputs = converse(plans, [{ type: 'message', message: maybe }, { type: 'message', message: pro }], {}, context())
  const transcript = buildTranscript(stream(outputs, [maybe, pro]))!
  t.match(transcript, { sessionId: SESSION, workspaceId: WORKSPACE, flowId: FLOW, flowVersion: 3, externalId: 'contact-1', status: 'completed', finishedAt: '2026-01-01T10:00:02.500Z' })
  t.same(
    transcript.entries.map((e) => [e.kind, 'nodeId' in e ? e.nodeId : null, e.eventId]),
    [
      ['started', null, id(100)],
      ['outbound', 'hello', id(300)],
      ['outbound', 'ask', id(300)],
      ['inbound', null, id(201)],
      ['outbound', 'ask', id(301)],
      ['warning', null, id(301)],
      ['inbound', null, id(202)],
      ['kanban', 'lead', id(302)],
      ['outbound', 'thanks', id(302)],
      ['function', 'human', id(302)],
    ],
  )
  const retry = transcript.entries[4]!
  t.same(retry, { kind: 'outbound', at: '2026-01-01T10:00:01.500Z', eventId: id(301), messageId: id(11), flowVersion: 3, nodeId: 'ask', message: { type: 'text', text: { body: 'Please tap a button.' } } }, 'the message as sent, without the engine’s nodeId')
  t.match(transcript.entries[7], { kind: 'kanban', kanban: { action: 'create', pipelineId: PIPELINE, stageId: STAGE_NEW } })
  t.match(transcript.entries[9], { kind: 'function', function: { type: 'transfer', targetType: 'sector', targetId: SECTOR } })
  t.match(transcript.entries[3], { kind: 'inbound', at: '2026-01-01T10:00:01.000Z', messageId: id(11), message: maybe })
})

t.test('an expired session ends with its expiry', async (t) => {
  const events = stream(converse(plans, []), [])
  events.push({ id: id(400), type: 'SessionExpired', data: { sessionId: SESSION, expiredAt: '2026-01-01T10:01:00.000Z' } })
  const transcript = buildTranscript(events)!
  t.equal(transcript.status, 'timeout')
  t.same(transcript.entries.at(-1), { kind: 'expired', at: '2026-01-01T10:01:00.000Z', eventId: id(400) })
})

t.test('a stream without a session has no transcript', async (t) => {
  t.equal(buildTranscript([]), undefined)
})

t.test('the Markdown form reads as a conversation and keeps user text from becoming markup', async (t) => {
  const outputs = converse(plans, [{ type: 'message', message: { type: 'text', text: { body: '# not a *heading*\nsecond line' } } }, { type: 'message', message: pro }])
  const markdown = transcriptMarkdown(buildTranscript(stream(outputs, [{ type: 'text', text: { body: '# not a *heading*\nsecond line' } }, pro]))!)
  const lines = markdown.split('\n')
  t.equal(lines[0], `# Session ${SESSION}`)
  t.ok(lines.includes(`- Flow: ${FLOW}, version 3`))
  t.ok(lines.includes('- `2026-01-01T10:00:00.500Z` **Bot** (v3, node `hello`): Hi \\*there\\*'))
  t.ok(lines.includes('- `2026-01-01T10:00:00.500Z` **Bot** (v3, node `ask`): Which plan? [Basic] [Pro]'))
  t.ok(lines.includes('- `2026-01-01T10:00:01.000Z` **User**: \\# not a \\*heading\\* ⏎ second line'), 'one line, markup escaped')
  t.ok(lines.includes('- `2026-01-01T10:00:02.000Z` **User**: chose “Pro” (`pro`)'))
  t.ok(lines.some((l) => l.startsWith('- `2026-01-01T10:00:02.500Z` **Kanban** (v3, node `lead`): card ') && l.endsWith(`created in pipeline ${PIPELINE}, stage ${STAGE_NEW}`)))
  t.ok(lines.includes(`- \`2026-01-01T10:00:02.500Z\` **Function** (v3, node \`human\`): transfer to sector ${SECTOR}`))
})
