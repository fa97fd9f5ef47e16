import t, { type Test } from 'tap'
import type { OutgoingMessage } from '../../src/domain/flow-definition.js'
import type { NodeData } from '../../src/domain/nodes/index.js'
import type { InputKind } from '../../src/domain/nodes/question.js'
import type { Trigger, TurnOutput } from '../../src/domain/turn.js'
import {
  buttonReply,
  buttons,
  converse,
  edge,
  end,
  flow,
  last,
  list,
  listReply,
  mediaReply,
  message,
  NOW,
  question,
  SECTOR,
  start,
  text,
  textReply,
  transfer,
} from '../helpers/engine.js'

type Question = NodeData<'question'>

/** start → ask; a valid answer leads to `ok`, an invalid one (no retries) to the `human` transfer. */
const askOnce = (kind: InputKind, reply: Trigger, prompt: OutgoingMessage = text('?')): TurnOutput => {
  const f = flow(
    [start(), question('ask', { prompt, input: { kind }, saveAs: 'answer', maxRetries: 0 }), end('ok'), transfer('human', 'sector', SECTOR)],
    [edge('start', 'ask'), edge('ask', 'ok', 'default'), edge('ask', 'human', 'invalid')],
  )
  return last(converse(f, [reply]))
}

const accepts = (kind: InputKind, reply: Trigger, saved: unknown) =>
  t.test(`${kind} accepts ${JSON.stringify(reply.type === 'message' ? reply.message : reply)}`, async (t) => {
    const out = askOnce(kind, reply)
    t.same(out.variables, { answer: saved })
    t.same(out.visited, ['ask', 'ok'])
    t.same(out.warnings, [])
  })

const rejects = (kind: InputKind, reply: Trigger) =>
  t.test(`${kind} rejects ${JSON.stringify(reply.type === 'message' ? reply.message : reply)}`, async (t) => {
    const out = askOnce(kind, reply)
    t.same(out.variables, {})
    t.same(out.visited, ['ask', 'human'])
    t.same(out.warnings, ['invalid reply to ask'])
  })

const image = mediaReply('image', { mimeType: 'image/png', url: 'https://cdn.example.com/a.png' })

t.test('text', async () => {
  accepts('text', textReply('  Ana Souza '), 'Ana Souza')
  rejects('text', textReply('   '))
  rejects('text', image)
  rejects('text', buttonReply('yes', 'Yes'))
})

t.test('number', async () => {
  accepts('number', textReply('42'), 42)
  accepts('number', textReply(' -3.25 '), -3.25)
  accepts('number', textReply('1,5'), 1.5)
  accepts('number', textReply('+7'), 7)
  rejects('number', textReply('abc'))
  rejects('number', textReply('1.2.3'))
  rejects('number', textReply('1e3'))
  rejects('number', textReply('Infinity'))
  rejects('number', textReply(''))
  rejects('number', image)
})

t.test('email', async () => {
  accepts('email', textReply(' Ana.Souza+news@Example.com.br '), 'Ana.Souza+news@Example.com.br')
  rejects('email', textReply('ana@'))
  rejects('email', textReply('ana@example'))
  rejects('email', textReply('ana souza@example.com'))
  rejects('email', textReply('ana@@example.com'))
  rejects('email', textReply('ana@example..com'))
  rejects('email', textReply(`${'a'.repeat(250)}@example.com`))
  rejects('email', buttonReply('ana@example.com', 'ana@example.com'))
})

t.test('phone', async () => {
  accepts('phone', textReply('+55 (11) 99999-8888'), '+5511999998888')
  accepts('phone', textReply('11 99999-8888'), '+11999998888')
  accepts('phone', textReply('12345678'), '+12345678')
  accepts('phone', textReply('123456789012345'), '+123456789012345')
  rejects('phone', textReply('1234567'))
  rejects('phone', textReply('1234567890123456'))
  rejects('phone', textReply('call 11999998888'))
  rejects('phone', textReply('11+999998888'))
  rejects('phone', image)
})

t.test('media', async () => {
  accepts(
    'media',
    mediaReply('image', { mimeType: 'image/jpeg', url: 'https://cdn.example.com/p.jpg', caption: 'me' }),
    { type: 'image', mimeType: 'image/jpeg', url: 'https://cdn.example.com/p.jpg', caption: 'me' },
  )
  for (const type of ['video', 'audio', 'document', 'sticker'] as const) {
    accepts('media', mediaReply(type, { mimeType: 'application/octet-stream', url: 'https://cdn.example.com/f' }), {
      type,
      mimeType: 'application/octet-stream',
      url: 'https://cdn.example.com/f',
    })
  }
  rejects('media', textReply('here it is'))
  rejects('media', buttonReply('a', 'A'))
})

t.test('choice', async (t) => {
  const plans = buttons('Which plan?', ['basic', 'Basic'], ['pro', 'Pro Plus'])
  const f = flow(
    [
      start(),
      question('ask', { prompt: plans, input: { kind: 'choice' }, saveAs: 'plan', maxRetries: 0 }),
      message('basic', text('basic chosen')),
      message('pro', text('pro chosen')),
      transfer('human', 'sector', SECTOR),
    ],
    [edge('start', 'ask'), edge('ask', 'basic', 'basic'), edge('ask', 'pro', 'pro'), edge('ask', 'human', 'invalid')],
  )
  const pick = (reply: Trigger) => last(converse(f, [reply]))
  const chose = (t: Test, out: TurnOutput, id: string) => {
    t.same(out.variables, { plan: id })
    t.same(out.visited, ['ask', id])
    t.same(out.warnings, [])
  }

  t.test('a button reply by id follows that choice', async (t) => chose(t, pick(buttonReply('pro', 'whatever')), 'pro'))
  t.test('a button reply with an unknown id matches its title, ignoring case', async (t) => chose(t, pick(buttonReply('old-id', 'pro PLUS')), 'pro'))
  t.test('the id wins over another choice\'s title', async (t) => chose(t, pick(buttonReply('basic', 'Pro Plus')), 'basic'))
  t.test('typed text matches a title, ignoring case and spaces around', async (t) => chose(t, pick(textReply('  BASIC ')), 'basic'))
  t.test('typed text matches an id', async (t) => chose(t, pick(textReply('PRO')), 'pro'))
  t.test('a list reply is a reply too', async (t) => chose(t, pick(listReply('basic', 'Basic')), 'basic'))

  t.test('text matching no choice is invalid', async (t) => {
    const out = pick(textReply('premium'))
    t.same(out.visited, ['ask', 'human'])
    t.same(out.warnings, ['invalid reply to ask'])
  })
  t.test('media is invalid', async (t) => t.same(pick(image).visited, ['ask', 'human']))

  t.test('a list prompt offers every row of every section', async (t) => {
    const prompt: OutgoingMessage = {
      type: 'interactive',
      interactive: {
        type: 'list',
        body: { text: 'Pick' },
        action: {
          button: 'Open',
          sections: [
            { title: 'A', rows: [{ id: 'r1', title: 'One' }] },
            { title: 'B', rows: [{ id: 'r2', title: 'Two' }] },
          ],
        },
      },
    }
    const out = askOnce('choice', listReply('r2', 'Two'), prompt)
    t.same(out.variables, { answer: 'r2' })
    t.same(out.visited, ['ask'], 'left by the unconnected handle r2, not by default')
  })

  t.test('titles are matched as the contact saw them, interpolated', async (t) => {
    const g = flow(
      [start(), question('ask', { prompt: list('Pick', ['mine', 'Plan {{plan}}']), input: { kind: 'choice' }, saveAs: 'picked' }), end('done')],
      [edge('start', 'ask'), edge('ask', 'done', 'mine')],
    )
    const out = last(converse(g, [textReply('plan gold')], { plan: 'Gold' }))
    t.same(out.variables, { picked: 'mine' })
    t.same(out.visited, ['ask', 'done'])
  })

  t.test('a prompt without buttons or rows accepts nothing', async (t) => {
    const link: OutgoingMessage = {
      type: 'interactive',
      interactive: { type: 'cta_url', body: { text: 'Open' }, action: { name: 'cta_url', parameters: { display_text: 'Go', url: 'https://example.com' } } },
    }
    for (const prompt of [text('Go'), link]) t.same(askOnce('choice', textReply('Go'), prompt).visited, ['ask', 'human'], prompt.type)
  })
})

t.test('an unconnected choice handle finishes the session', async (t) => {
  const f = flow(
    [start(), question('ask', { prompt: buttons('?', ['yes', 'Yes'], ['no', 'No']), input: { kind: 'choice' } }), end('bye')],
    [edge('start', 'ask'), edge('ask', 'bye', 'yes')],
  )
  const out = last(converse(f, [buttonReply('no', 'No')]))
  t.same(out.visited, ['ask'])
  t.same(out.functions, [{ type: 'finish', timestamp: NOW }])
  t.equal(out.status, 'completed')
})

t.test('without saveAs a valid reply is not stored', async (t) => {
  const f = flow([start(), question('ask', { prompt: text('?'), input: { kind: 'text' } }), end()], [edge('start', 'ask'), edge('ask', 'end', 'default')])
  const out = last(converse(f, [textReply('hi')]))
  t.same(out.variables, {})
  t.same(out.state.variables, {})
  t.same(out.visited, ['ask', 'end'])
})

t.test('retries', async (t) => {
  const retryFlow = (data: Partial<Question>, invalidTo = true) =>
    flow(
      [
        start(),
        question('ask', { prompt: text('Age, {{name}}?'), input: { kind: 'number' }, saveAs: 'age', ...data }),
        end('ok'),
        transfer('human', 'sector', SECTOR),
      ],
      [edge('start', 'ask'), edge('ask', 'ok', 'default'), ...(invalidTo ? [edge('ask', 'human', 'invalid')] : [])],
    )
  const bodiesOf = (out: TurnOutput | undefined) => out?.messages.map((m) => (m.type === 'text' ? `${m.nodeId}: ${m.text.body}` : m.type))

  t.test('an invalid reply sends the retry message and waits again, counting the retry', async (t) => {
    const [, first, second] = converse(retryFlow({ retryMessage: text('A number please, {{name}}') }), [textReply('old'), textReply('very old')], { name: 'Ana' })
    t.same(bodiesOf(first), ['ask: A number please, Ana'])
    t.same(first?.state.waitingAt, { nodeId: 'ask', retries: 1 })
    t.equal(first?.status, 'active')
    t.same(first?.warnings, ['invalid reply to ask'])
    t.same(first?.visited, ['ask'])
    t.same(second?.state.waitingAt, { nodeId: 'ask', retries: 2 })
    t.same(second?.warnings, ['invalid reply to ask'])
  })

  t.test('without a retry message the prompt is sent again', async (t) => {
    const [, first] = converse(retryFlow({}), [textReply('old')], { name: 'Ana' })
    t.same(bodiesOf(first), ['ask: Age, Ana?'])
  })

  t.test('after maxRetries (default 2) the invalid handle is followed', async (t) => {
    const outs = converse(retryFlow({}), [textReply('a'), textReply('b'), textReply('c')])
    t.same(
      outs.map((o) => o.state.waitingAt),
      [{ nodeId: 'ask', retries: 0 }, { nodeId: 'ask', retries: 1 }, { nodeId: 'ask', retries: 2 }, null],
    )
    const out = last(outs)
    t.same(out.visited, ['ask', 'human'])
    t.same(out.messages, [])
    t.same(out.warnings, ['invalid reply to ask'])
    t.match(out.functions, [{ type: 'transfer', targetId: SECTOR }])
    t.equal(out.status, 'completed')
  })

  t.test('maxRetries 0 follows the invalid handle at the first invalid reply', async (t) => {
    t.same(last(converse(retryFlow({ maxRetries: 0 }), [textReply('a')])).visited, ['ask', 'human'])
  })

  t.test('an unconnected invalid handle finishes the session', async (t) => {
    const out = last(converse(retryFlow({ maxRetries: 1 }, false), [textReply('a'), textReply('b')]))
    t.same(out.visited, ['ask'])
    t.same(out.functions, [{ type: 'finish', timestamp: NOW }])
    t.equal(out.status, 'completed')
    t.equal(out.state.waitingAt, null)
  })

  t.test('a valid reply after a retry continues on default and stops waiting', async (t) => {
    const out = last(converse(retryFlow({}), [textReply('old'), textReply('33')]))
    t.same(out.variables, { age: 33 })
    t.same(out.visited, ['ask', 'ok'])
    t.same(out.warnings, [])
    t.equal(out.state.waitingAt, null)
  })

  t.test('a wrong message type is invalid, not an error', async (t) => {
    const [, out] = converse(retryFlow({}), [buttonReply('x', 'X')], { name: 'Ana' })
    t.equal(out?.status, 'active')
    t.same(out?.warnings, ['invalid reply to ask'])
  })
})
