import t from 'tap'
import type { OutgoingMessage } from '../../src/domain/flow-definition.js'
import { initialConversation } from '../../src/engine/interpreter.js'
import { interpolator, lookup, render } from '../../src/domain/interpolate.js'
import type { VariableValue } from '../../src/domain/turn.js'
import { chain, context, flow, message, start, START, text, turn } from '../helpers/engine.js'

const variables: Record<string, VariableValue> = {
  name: 'Ana',
  plan: 'Pro',
  total: 99.5,
  vip: true,
  customer: { name: 'Ana Souza', address: { city: 'Recife' }, orders: [{ id: 'o-1' }] },
}

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

t.test('interpolation', async (t) => {
  const body = (template: string, ctx = context()) => {
    const out = turn(flow([start(), message('say', text(template))], chain('start', 'say')), initialConversation(variables), START, ctx)
    return { body: out.messages[0]?.type === 'text' ? out.messages[0].text.body : undefined, warnings: out.warnings }
  }

  t.test('an unknown variable renders empty and warns once per node', async (t) => {
    t.same(body('Hi {{nick}}, {{nick}}! {{other}}'), {
      body: 'Hi , ! ',
      warnings: ['unknown variable {{nick}} in node say', 'unknown variable {{other}} in node say'],
    })
  })

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

  t.test('system variables are read first and shadow conversation variables', async (t) => {
    const ctx = context({ system: { sessionId: 's-9', name: 'System', lastMessage: 'hello' } })
    t.same(body('{{sessionId}} {{name}} {{lastMessage}} {{plan}}', ctx), { body: 's-9 System hello Pro', warnings: [] })
  })

  t.test('dotted paths reach into objects and arrays', async (t) => {
    t.same(body('{{customer.name}} in {{customer.address.city}}, order {{customer.orders.0.id}}'), {
      body: 'Ana Souza in Recife, order o-1',
      warnings: [],
    })
  })

  t.test('a missing path warns with the whole path', async (t) => {
    t.same(body('[{{customer.address.zip}}][{{plan.length}}]'), {
      body: '[][]',
      warnings: ['unknown variable {{customer.address.zip}} in node say', 'unknown variable {{plan.length}} in node say'],
    })
  })

  t.test('non-string values render as text, objects as JSON', async (t) => {
    t.same(body('{{total}} {{vip}} {{customer.address}}'), { body: '99.5 true {"city":"Recife"}', warnings: [] })
  })

  t.test('spaces inside the braces are allowed; anything that is not a name stays as written', async (t) => {
    t.same(body('{{ name }} {{1x}} {{ }} {name} {{a-b}}'), { body: 'Ana {{1x}} {{ }} {name} {{a-b}}', warnings: [] })
  })

  t.test('inherited properties are not variables', async (t) => {
    t.same(body('[{{constructor}}][{{customer.toString}}][{{__proto__}}]').body, '[][][]')
  })

  t.test('lookup and render', async (t) => {
    const scope = { system: { a: 1 }, variables: { a: 2, b: { c: null } } }
    t.equal(lookup(scope, 'a'), 1)
    t.equal(lookup(scope, 'b.c'), null)
    t.equal(lookup(scope, 'b.c.d'), undefined)
    t.equal(render(null), '')
    t.equal(render([1, 'x']), '[1,"x"]')
    const interpolate = interpolator(scope)
    t.equal(interpolate.text('{{b.c}}|{{zz}}'), '|')
    t.same([...interpolate.unknown], ['zz'], 'a null found is not unknown')
  })
})
