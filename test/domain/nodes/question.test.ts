import t, { type Test } from 'tap'
import type { OutgoingMessage } from '../../../src/domain/flow-definition.js'
import type { NodeData } from '../../../src/domain/nodes/index.js'
import { check, exits, messages, resume, run, schema, wake, writes, type InputKind } from '../../../src/domain/nodes/question.js'
import type { Step, Wake } from '../../../src/domain/nodes/node-type.js'
import type { VariableType } from '../../../src/domain/variables.js'
import { accepts, examples } from '../../helpers/decider-spec.js'
import type { Trigger, TurnOutput } from '../../../src/domain/turn.js'
import {
  bodies,
  buttonReply,
  buttons,
  context,
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
} from '../../helpers/engine.js'
import { checkProblems, emptyCatalog, recordingVisit, VISIT_NOW, type Effect } from '../../helpers/visit.js'

type Question = NodeData<'question'>

/** start → ask; a valid answer leads to `ok`, an invalid one (no retries) to the `human` transfer. */
const askOnce = (kind: InputKind, reply: Trigger, prompt: OutgoingMessage = text('?')): TurnOutput => {
  const f = flow(
    [start(), question('ask', { prompt, input: { kind }, saveAs: 'answer', maxRetries: 0 }), end('ok'), transfer('human', 'sector', SECTOR)],
    [edge('start', 'ask'), edge('ask', 'ok', 'default'), edge('ask', 'human', 'invalid')],
  )
  return last(converse(f, [reply]))
}

const image = mediaReply('image', { mimeType: 'image/png', url: 'https://cdn.example.com/a.png' })

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

t.test('date', async (t) => {
  const f = flow(
    [start(), question('ask', { prompt: text('When?'), input: { kind: 'date' }, saveAs: 'day', maxRetries: 1, retryMessage: text('A date like 28/11/2026, please') }), end('ok')],
    [edge('start', 'ask'), edge('ask', 'ok', 'default')],
  )
  // NOW is midnight UTC opening 2026-01-01: São Paulo and Pago Pago are still on 2025-12-31.
  const answer = (reply: string, timeZone = 'UTC') => converse(f, [textReply(reply)], {}, context({ timeZone }))[1]!

  t.test('a date is saved as YYYY-MM-DD and leaves by default', async (t) => {
    for (const reply of ['28/11/2026', '2026-11-28']) {
      const out = answer(reply, 'America/Sao_Paulo')
      t.same(out.variables, { day: '2026-11-28' }, reply)
      t.same(out.visited, ['ask', 'ok'])
    }
  })

  t.test('today and tomorrow count from the day in the workspace’s time zone', async (t) => {
    t.same(answer('amanhã').variables, { day: '2026-01-02' }, 'in UTC')
    t.same(answer('Amanhã', 'America/Sao_Paulo').variables, { day: '2026-01-01' }, 'in São Paulo')
    t.same(answer('today', 'Pacific/Pago_Pago').variables, { day: '2025-12-31' }, 'in Pago Pago')
    t.same(answer('HOJE', 'Pacific/Kiritimati').variables, { day: '2026-01-01' }, 'in Kiritimati')
  })

  t.test('an ambiguous or impossible date is invalid: the retry message, and the question waits again', async (t) => {
    for (const reply of ['11/28/2026', '31/02/2026', 'yesterday', '28/11/2026 or 29/11/2026']) {
      const out = answer(reply)
      t.same(bodies(out), ['A date like 28/11/2026, please'], reply)
      t.same(out.warnings, ['invalid reply to ask'])
      t.same(out.state.waitingAt, { nodeId: 'ask', retries: 1 })
      t.same(out.variables, {})
    }
  })
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

t.test('schema', async (t) => {
  examples(t, accepts(schema), [
    ['a prompt and an input kind', [{ prompt: text('?'), input: { kind: 'email' } }], true],
    ['every option', [{ prompt: text('?'), input: { kind: 'number' }, saveAs: 'age', maxRetries: 10, retryMessage: text('A number') }], true],
    ['a date', [{ prompt: text('When?'), input: { kind: 'date' }, saveAs: 'day' }], true],
    ['an input kind it does not know', [{ prompt: text('?'), input: { kind: 'time' } }], false],
    ['more than 10 retries', [{ prompt: text('?'), input: { kind: 'text' }, maxRetries: 11 }], false],
    ['negative retries', [{ prompt: text('?'), input: { kind: 'text' }, maxRetries: -1 }], false],
    ['no prompt', [{ input: { kind: 'text' } }], false],
    ['a timeout with three reminders', [{ prompt: text('?'), input: { kind: 'text' }, timeout: { seconds: 3600, reminders: [1, 2, 3].map((n) => ({ afterSeconds: n * 600, message: text('Still there?') })) } }], true],
    ['the shortest timeout, 5 s', [{ prompt: text('?'), input: { kind: 'text' }, timeout: { seconds: 5 } }], true],
    ['the longest timeout, a week', [{ prompt: text('?'), input: { kind: 'text' }, timeout: { seconds: 604800 } }], true],
    ['a timeout under 5 s', [{ prompt: text('?'), input: { kind: 'text' }, timeout: { seconds: 4 } }], false],
    ['a timeout over a week', [{ prompt: text('?'), input: { kind: 'text' }, timeout: { seconds: 604801 } }], false],
    ['four reminders', [{ prompt: text('?'), input: { kind: 'text' }, timeout: { seconds: 3600, reminders: [1, 2, 3, 4].map((n) => ({ afterSeconds: n * 600, message: text('?') })) } }], false],
    ['a reminder at 0 s', [{ prompt: text('?'), input: { kind: 'text' }, timeout: { seconds: 60, reminders: [{ afterSeconds: 0, message: text('?') }] } }], false],
    ['a reminder without a message', [{ prompt: text('?'), input: { kind: 'text' }, timeout: { seconds: 60, reminders: [{ afterSeconds: 10 }] } }], false],
  ])
})

t.test('exits', async (t) => {
  const invalid = { id: 'invalid', label: 'invalid', kind: 'invalid' } as const
  examples(t, exits, [
    ['a choice: each button, then invalid', [{ prompt: buttons('?', ['yes', 'Yes'], ['no', '']), input: { kind: 'choice' } }], [{ id: 'yes', label: 'Yes' }, { id: 'no', label: 'no' }, invalid]],
    ['a choice without a prompt yet: invalid only', [{ input: { kind: 'choice' } }], [invalid]],
    ['another kind: default and invalid', [{ input: { kind: 'phone' } }], [{ id: 'default', label: 'default', kind: 'default' as const }, invalid]],
    ['with a timeout: timeout last', [{ input: { kind: 'text' }, timeout: { seconds: 60 } }], [{ id: 'default', label: 'default', kind: 'default' as const }, invalid, { id: 'timeout', label: 'timeout', kind: 'timeout' as const }]],
    ['a choice with a timeout', [{ prompt: buttons('?', ['yes', 'Yes']), input: { kind: 'choice' }, timeout: { seconds: 60 } }], [{ id: 'yes', label: 'Yes' }, invalid, { id: 'timeout', label: 'timeout', kind: 'timeout' as const }]],
  ])
})

t.test('check', async (t) => {
  const catalog = { ...emptyCatalog, variables: new Map<string, VariableType>([['age', 'number'], ['name', 'string']]) }
  const problems = function problems(data: Question) {
    return checkProblems(check, data, catalog)
  }
  examples(t, problems, [
    ['a number saved into a number variable', [{ prompt: text('?'), input: { kind: 'number' }, saveAs: 'age' }], []],
    ['a choice saved into a string variable', [{ prompt: buttons('?', ['a', 'A']), input: { kind: 'choice' }, saveAs: 'name' }], []],
    ['a date saved into a string variable', [{ prompt: text('?'), input: { kind: 'date' }, saveAs: 'name' }], []],
    ['a date saved into a number variable', [{ prompt: text('?'), input: { kind: 'date' }, saveAs: 'age' }], ['saveAs: variable "age" holds a number, but this question saves a string']],
    ['a number saved into a string variable', [{ prompt: text('?'), input: { kind: 'number' }, saveAs: 'name' }], ['saveAs: variable "name" holds a string, but this question saves a number']],
    ['a choice without buttons or rows', [{ prompt: text('?'), input: { kind: 'choice' } }], ["prompt: a choice question's prompt must be an interactive button or list message"]],
    ['reminders in order, each before the timeout', [{ prompt: text('?'), input: { kind: 'text' }, timeout: { seconds: 60, reminders: [{ afterSeconds: 20, message: text('a') }, { afterSeconds: 40, message: text('b') }] } }], []],
    [
      'a reminder at or after the timeout',
      [{ prompt: text('?'), input: { kind: 'text' }, timeout: { seconds: 60, reminders: [{ afterSeconds: 60, message: text('a') }] } }],
      ['timeout.reminders.0.afterSeconds: a reminder is sent before the question times out (after 60 s)'],
    ],
    [
      'reminders out of order',
      [{ prompt: text('?'), input: { kind: 'text' }, timeout: { seconds: 60, reminders: [{ afterSeconds: 30, message: text('a') }, { afterSeconds: 30, message: text('b') }] } }],
      ['timeout.reminders.1.afterSeconds: reminders are listed in the order they are sent, each later than the one before'],
    ],
    ['a choice named as the invalid exit', [{ prompt: list('?', ['invalid', 'No idea']), input: { kind: 'choice' } }], ['prompt.interactive.action.sections.0.rows.0.id: "invalid" is the handle of invalid replies; choose another id']],
  ])
})

t.test('messages and writes, read from data as written', async (t) => {
  examples(t, messages, [
    ['the prompt and the retry message', [{ prompt: 'p', retryMessage: 'r' }], [{ value: 'p', at: ['prompt'] }, { value: 'r', at: ['retryMessage'] }]],
    [
      'and each reminder',
      [{ prompt: 'p', timeout: { seconds: 60, reminders: [{ afterSeconds: 10, message: 'm' }, 'odd'] } }],
      [{ value: 'p', at: ['prompt'] }, { value: undefined, at: ['retryMessage'] }, { value: 'm', at: ['timeout', 'reminders', 0, 'message'] }, { value: undefined, at: ['timeout', 'reminders', 1, 'message'] }],
    ],
  ])
  examples(t, writes, [
    ['saveAs', [{ saveAs: 'age' }], 'age'],
    ['nothing without saveAs', [{}], undefined],
    ['nothing for a saveAs that is not a name', [{ saveAs: 3 }], undefined],
  ])
})

t.test('timeout: the timer of a question waiting, its reminders and its timeout', async (t) => {
  const reminder = (body: string, afterSeconds: number) => ({ afterSeconds, message: text(body) })
  const data: Question = { prompt: text('Your order number?'), input: { kind: 'text' }, timeout: { seconds: 3600, reminders: [reminder('Still there?', 600), reminder('Last call', 1800)] } }
  const asked = VISIT_NOW
  const at = (seconds: number) => asked + seconds * 1000
  const iso = (seconds: number) => new Date(at(seconds)).toISOString()
  const woken = function woken(question: Question, how: Wake): { step: Step; effects: Effect[] } {
    const { visit, effects } = recordingVisit()
    const step = wake({ id: 'ask', type: 'question', position: { x: 0, y: 0 }, data: question }, visit, how)
    return { step, effects }
  }
  const ran = function ran(question: Question): { step: Step; effects: Effect[] } {
    const { visit, effects } = recordingVisit()
    const step = run({ id: 'ask', type: 'question', position: { x: 0, y: 0 }, data: question }, visit)
    return { step, effects }
  }
  examples(t, ran, [
    ['the prompt, then a wait until the first reminder', [data], { step: 'wait', effects: [{ send: [data.prompt] }, { wait: 0, timer: { until: at(600), reminded: 0 } }] }],
    ['without reminders, until the timeout', [{ ...data, timeout: { seconds: 60 } }], { step: 'wait', effects: [{ send: [data.prompt] }, { wait: 0, timer: { until: at(60), reminded: 0 } }] }],
    ['without a timeout, no timer', [{ prompt: data.prompt, input: { kind: 'text' } }], { step: 'wait', effects: [{ send: [data.prompt] }, { wait: 0 }] }],
  ])
  examples(t, woken, [
    [
      'the first reminder: sent, then a wait until the second, timed from the prompt',
      [data, { type: 'timer', until: iso(600), retries: 1, reminded: 0 }],
      { step: 'wait', effects: [{ send: [text('Still there?')] }, { wait: 1, timer: { until: at(1800), reminded: 1 } }] },
    ],
    [
      'the last reminder: sent, then a wait until the timeout',
      [data, { type: 'timer', until: iso(1800), retries: 0, reminded: 1 }],
      { step: 'wait', effects: [{ send: [text('Last call')] }, { wait: 0, timer: { until: at(3600), reminded: 2 } }] },
    ],
    [
      'the timeout: it stops waiting and leaves by timeout, sending nothing',
      [data, { type: 'timer', until: iso(3600), retries: 0, reminded: 2 }],
      { step: { exit: 'timeout', finishReason: 'timeout' }, effects: ['stopWaiting'] },
    ],
  ])

  t.test('an invalid reply re-prompts and times again from the re-prompt, reminders and all', async (t) => {
    const { visit, effects } = recordingVisit()
    const step = resume({ id: 'ask', type: 'question', position: { x: 0, y: 0 }, data: { ...data, input: { kind: 'number' } } }, visit, 0, { type: 'text', text: { body: 'no idea' } })
    t.equal(step, 'wait')
    t.same(effects, [{ warn: 'invalid reply to ask' }, { send: [data.prompt] }, { wait: 1, timer: { until: at(600), reminded: 0 } }])
  })
})
