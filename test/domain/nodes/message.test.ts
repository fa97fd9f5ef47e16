import t from 'tap'
import type { OutgoingMessage } from '../../../src/domain/flow-definition.js'
import { messages, schema } from '../../../src/domain/nodes/message.js'
import { initialConversation } from '../../../src/engine/interpreter.js'
import { accepts, examples } from '../../helpers/decider-spec.js'
import { chain, context, customerVariables as variables, flow, message, start, START, text, turn } from '../../helpers/engine.js'

/** Sends the messages from one message node and returns what went out. */
const send = (...messages: OutgoingMessage[]) =>
  turn(flow([start(), message('say', ...messages)], chain('start', 'say')), initialConversation(variables), START, context())

t.test('outgoing message types, each interpolated and with its tags and node id', async (t) => {
  t.test('text', async (t) => {
    t.same(send(text('Hi {{name}}', ['greeting', 'vip'])).messages, [
      { type: 'text', text: { body: 'Hi Ana' }, tags: ['greeting', 'vip'], nodeId: 'say' },
    ])
  })

  t.test('media with a caption', async (t) => {
    const out = send({
      type: 'media',
      media: { type: 'image', mimeType: 'image/png', url: 'https://cdn.example.com/{{plan}}.png', caption: 'Your {{plan}} card' },
      tags: ['card'],
    })
    t.same(out.messages, [
      {
        type: 'media',
        media: { type: 'image', mimeType: 'image/png', url: 'https://cdn.example.com/Pro.png', caption: 'Your Pro card' },
        tags: ['card'],
        nodeId: 'say',
      },
    ])
  })

  t.test('media without a caption gets none', async (t) => {
    const out = send({ type: 'media', media: { type: 'document', mimeType: 'application/pdf', url: 'https://cdn.example.com/{{name}}.pdf' } })
    t.same(out.messages, [{ type: 'media', media: { type: 'document', mimeType: 'application/pdf', url: 'https://cdn.example.com/Ana.pdf' }, nodeId: 'say' }])
  })

  t.test('template: params interpolated, id kept', async (t) => {
    const out = send({ type: 'template', template: { id: 'welcome_{{plan}}', params: ['{{name}}', '{{total}}', 'fixed'] }, tags: ['t'] })
    t.same(out.messages, [{ type: 'template', template: { id: 'welcome_{{plan}}', params: ['Ana', '99.5', 'fixed'] }, tags: ['t'], nodeId: 'say' }])
  })

  t.test('interactive button: body, footer and titles interpolated, ids kept', async (t) => {
    const out = send({
      type: 'interactive',
      interactive: {
        type: 'button',
        body: { text: 'Hi {{name}}' },
        footer: { text: 'Plan {{plan}}' },
        action: { buttons: [{ id: 'keep_{{plan}}', title: 'Keep {{plan}}' }, { id: 'cancel', title: 'Cancel' }] },
      },
      tags: ['menu'],
    })
    t.same(out.messages, [
      {
        type: 'interactive',
        interactive: {
          type: 'button',
          body: { text: 'Hi Ana' },
          footer: { text: 'Plan Pro' },
          action: { buttons: [{ id: 'keep_{{plan}}', title: 'Keep Pro' }, { id: 'cancel', title: 'Cancel' }] },
        },
        tags: ['menu'],
        nodeId: 'say',
      },
    ])
  })

  t.test('interactive list: every label interpolated, row ids kept', async (t) => {
    const out = send({
      type: 'interactive',
      interactive: {
        type: 'list',
        body: { text: '{{name}}, pick one' },
        footer: { text: 'from {{customer.address.city}}' },
        action: {
          button: 'See {{plan}} options',
          sections: [
            { title: 'For {{name}}', rows: [{ id: 'r_{{plan}}', title: 'Upgrade {{plan}}', description: 'Only {{total}}' }, { id: 'r2', title: 'Stay' }] },
          ],
        },
      },
    })
    t.same(out.messages, [
      {
        type: 'interactive',
        interactive: {
          type: 'list',
          body: { text: 'Ana, pick one' },
          footer: { text: 'from Recife' },
          action: {
            button: 'See Pro options',
            sections: [{ title: 'For Ana', rows: [{ id: 'r_{{plan}}', title: 'Upgrade Pro', description: 'Only 99.5' }, { id: 'r2', title: 'Stay' }] }],
          },
        },
        nodeId: 'say',
      },
    ])
  })

  t.test('interactive cta_url: body, label and url interpolated', async (t) => {
    const out = send({
      type: 'interactive',
      interactive: {
        type: 'cta_url',
        body: { text: 'Pay {{total}}' },
        action: { name: 'cta_url', parameters: { display_text: 'Pay, {{name}}', url: 'https://pay.example.com/{{customer.orders.0.id}}' } },
      },
      tags: ['pay'],
    })
    t.same(out.messages, [
      {
        type: 'interactive',
        interactive: {
          type: 'cta_url',
          body: { text: 'Pay 99.5' },
          action: { name: 'cta_url', parameters: { display_text: 'Pay, Ana', url: 'https://pay.example.com/o-1' } },
        },
        tags: ['pay'],
        nodeId: 'say',
      },
    ])
  })

  t.test('tags are copied as written, not interpolated', async (t) => {
    t.same(send(text('x', ['{{plan}}'])).messages[0]?.tags, ['{{plan}}'])
  })

  t.test('a message without tags has no tags field', async (t) => {
    t.notOk('tags' in (send(text('x')).messages[0] ?? {}))
  })
})

t.test('sending', async (t) => {
  t.test('each node warns for itself', async (t) => {
    const out = turn(flow([start(), message('one', text('x={{x}}')), message('two', text('x={{x}}'))], chain('start', 'one', 'two')), initialConversation(), START)
    t.same(out.warnings, ['unknown variable {{x}} in node one', 'unknown variable {{x}} in node two'])
  })

  t.test('a message that breaks its schema is not sent', async (t) => {
    const out = turn(flow([start(), message('say', text('before'), text(''))], chain('start', 'say')), initialConversation(), START)
    t.same(out.messages, [{ type: 'text', text: { body: 'before' }, nodeId: 'say' }])
    t.same(out.warnings, ['message 2 of node say not sent: not a valid outgoing message'])
  })

  t.test('a message left without a required text is not sent, and says so', async (t) => {
    const out = turn(flow([start(), message('say', text('{{x}}'), text('after'))], chain('start', 'say')), initialConversation(), START)
    t.same(out.messages, [{ type: 'text', text: { body: 'after' }, nodeId: 'say' }])
    t.same(out.warnings, ['unknown variable {{x}} in node say', 'message 1 of node say not sent: a required text is empty after interpolation'])
    t.equal(out.status, 'completed')
  })
})

t.test("a text interpolated past the channel's limit is cut at the limit, with a warning", async (t) => {
  const said = `${'é'.repeat(4090)}😀😀😀😀😀😀`
  const send = (...messages: OutgoingMessage[]) => turn(flow([start(), message('say', ...messages)], chain('start', 'say')), initialConversation({ said }), START, context())
  const echoed = send(text('You said: {{said}}'), text('{{said}}'))
  const body = (index: number) => {
    const sent = echoed.messages[index]
    return sent?.type === 'text' ? sent.text.body : ''
  }
  t.equal([...body(0)].length, 4096, 'the echo is cut to 4,096 characters (code points, as the channel counts)')
  t.ok(body(0).startsWith('You said: éé'), 'from its end')
  t.equal(body(1), said, 'a text at the limit is sent whole: an emoji is one character, not two')
  t.same(echoed.warnings, ["message 1 of node say: a text of 4106 characters after interpolation was cut to the channel's 4096"])

  const buttons = send({
    type: 'interactive',
    interactive: { type: 'button', body: { text: 'Pick' }, action: { buttons: [{ id: 'a', title: 'Plan {{said}}' }] } },
  })
  const sent = buttons.messages[0]
  t.equal(sent?.type === 'interactive' && sent.interactive.type === 'button' ? sent.interactive.action.buttons[0]?.title : undefined, `Plan ${'é'.repeat(15)}`, 'a button title is cut at 20')
  t.match(buttons.warnings, [/cut to the channel's 20/])
})

t.test('schema', async (t) => {
  examples(t, accepts(schema), [
    ['one message', [{ messages: [text('Hi')] }], true],
    ['several, of several types', [{ messages: [text('Hi'), { type: 'template', template: { id: 'welcome', params: [] } }] }], true],
    ['no message', [{ messages: [] }], false],
    ['a message of no known type', [{ messages: [{ type: 'fax', fax: {} }] }], false],
  ])
})

t.test('messages: each as written, at its path, for the channel limits', async (t) => {
  examples(t, messages, [
    ['every message, valid or not', [{ messages: [text('Hi'), { type: 'fax' }] }], [{ value: text('Hi'), at: ['messages', 0] }, { value: { type: 'fax' }, at: ['messages', 1] }]],
    ['a draft without a list of messages has none', [{ messages: 'Hi' }], []],
  ])
})
