import t from 'tap'
import type { OutgoingMessage } from '../../src/domain/flow-definition.js'
import type { InputKind } from '../../src/domain/nodes/question.js'
import { choicesOf, parseNumber, parseReply, type Choice, type Reply } from '../../src/domain/replies.js'
import type { InboundMessage, VariableValue } from '../../src/domain/turn.js'
import { examples } from '../helpers/decider-spec.js'
import { buttons, list, text } from '../helpers/engine.js'

const typed = (body: string): InboundMessage => ({ type: 'text', text: { body } })
const button = (id: string, title: string): InboundMessage => ({ type: 'interactive', interactive: { type: 'button_reply', button_reply: { id, title } } })
const row = (id: string, title: string): InboundMessage => ({ type: 'interactive', interactive: { type: 'list_reply', list_reply: { id, title } } })
const media = (type: 'image' | 'video' | 'audio' | 'document' | 'sticker', data: { mimeType: string; url: string; caption?: string }): InboundMessage => ({ type, media: data })
const image = media('image', { mimeType: 'image/png', url: 'https://cdn.example.com/a.png' })

const shown = (message: InboundMessage) => JSON.stringify(message.type === 'text' ? message.text.body : message)
const valid = (value: VariableValue): Reply => ({ value, handle: 'default' })
const today = () => '2026-11-27'
type Row = readonly [string, [InputKind, InboundMessage, Choice[], () => string], Reply]
const accepted = (kind: InputKind, message: InboundMessage, saved: VariableValue): Row => [`${kind} accepts ${shown(message)}`, [kind, message, [], today], valid(saved)]
const refused = (kind: InputKind, message: InboundMessage): Row => [`${kind} rejects ${shown(message)}`, [kind, message, [], today], null]

t.test('text', async (t) => {
  examples(t, parseReply, [accepted('text', typed('  Ana Souza '), 'Ana Souza'), refused('text', typed('   ')), refused('text', image), refused('text', button('yes', 'Yes'))])
})

t.test('number', async (t) => {
  examples(t, parseReply, [
    accepted('number', typed('42'), 42),
    accepted('number', typed(' -3.25 '), -3.25),
    accepted('number', typed('1,5'), 1.5),
    accepted('number', typed('+7'), 7),
    ...['abc', '1.2.3', '1e3', 'Infinity', ''].map((body) => refused('number', typed(body))),
    refused('number', image),
  ])
})

t.test('email', async (t) => {
  examples(t, parseReply, [
    accepted('email', typed(' Ana.Souza+news@Example.com.br '), 'Ana.Souza+news@Example.com.br'),
    ...['ana@', 'ana@example', 'ana souza@example.com', 'ana@@example.com', 'ana@example..com', `${'a'.repeat(250)}@example.com`].map((body) => refused('email', typed(body))),
    refused('email', button('ana@example.com', 'ana@example.com')),
  ])
})

t.test('phone', async (t) => {
  examples(t, parseReply, [
    accepted('phone', typed('+55 (11) 99999-8888'), '+5511999998888'),
    accepted('phone', typed('11 99999-8888'), '+11999998888'),
    accepted('phone', typed('12345678'), '+12345678'),
    accepted('phone', typed('123456789012345'), '+123456789012345'),
    ...['1234567', '1234567890123456', 'call 11999998888', '11+999998888'].map((body) => refused('phone', typed(body))),
    refused('phone', image),
  ])
})

t.test('date', async (t) => {
  examples(t, parseReply, [
    accepted('date', typed(' 28/11/2026 '), '2026-11-28'),
    accepted('date', typed('2026-11-28'), '2026-11-28'),
    accepted('date', typed('Amanhã'), '2026-11-28'),
    ...['31/02/2026', '11/28/2026', 'yesterday', 'next friday', ''].map((body) => refused('date', typed(body))),
    refused('date', button('2026-11-28', '28/11/2026')),
  ])
})

t.test('media', async (t) => {
  examples(t, parseReply, [
    accepted('media', media('image', { mimeType: 'image/jpeg', url: 'https://cdn.example.com/p.jpg', caption: 'me' }), { type: 'image', mimeType: 'image/jpeg', url: 'https://cdn.example.com/p.jpg', caption: 'me' }),
    ...(['video', 'audio', 'document', 'sticker'] as const).map((type) =>
      accepted('media', media(type, { mimeType: 'application/octet-stream', url: 'https://cdn.example.com/f' }), { type, mimeType: 'application/octet-stream', url: 'https://cdn.example.com/f' }),
    ),
    refused('media', typed('here it is')),
    refused('media', button('a', 'A')),
  ])
})

t.test('choice', async (t) => {
  const plans: Choice[] = [{ id: 'basic', title: 'Basic' }, { id: 'pro', title: 'Pro Plus' }]
  const chose = (id: string): Reply => ({ value: id, handle: id })
  examples(t, parseReply, [
    ['a button reply by id', ['choice', button('pro', 'whatever'), plans, today], chose('pro')],
    ['a button reply with an unknown id by its title, ignoring case', ['choice', button('old-id', 'pro PLUS'), plans, today], chose('pro')],
    ["the id wins over another choice's title", ['choice', button('basic', 'Pro Plus'), plans, today], chose('basic')],
    ['typed text matching a title, ignoring case and spaces around', ['choice', typed('  BASIC '), plans, today], chose('basic')],
    ['typed text matching an id', ['choice', typed('PRO'), plans, today], chose('pro')],
    ['a list reply', ['choice', row('basic', 'Basic'), plans, today], chose('basic')],
    ['text matching no choice', ['choice', typed('premium'), plans, today], null],
    ['media', ['choice', image, plans, today], null],
    ['no choices to pick from', ['choice', typed('Go'), [], today], null],
  ])
})

t.test('parseNumber', async (t) => {
  examples(t, parseNumber, [
    ['a comma as the decimal separator', ['1,5'], 1.5],
    ['no leading digit', ['.5'], 0.5],
    ['thousands separators are not read', ['1.000,5'], undefined],
    ['digits too many for a finite number', ['9'.repeat(400)], undefined],
  ])
})

t.test('choicesOf', async (t) => {
  const link: OutgoingMessage = { type: 'interactive', interactive: { type: 'cta_url', body: { text: 'Open' }, action: { name: 'cta_url', parameters: { display_text: 'Go', url: 'https://example.com' } } } }
  const sections: OutgoingMessage = {
    type: 'interactive',
    interactive: { type: 'list', body: { text: 'Pick' }, action: { button: 'Open', sections: [{ title: 'A', rows: [{ id: 'r1', title: 'One', description: 'first' }] }, { title: 'B', rows: [{ id: 'r2', title: 'Two' }] }] } },
  }
  examples(t, choicesOf, [
    ["a button prompt's buttons", [buttons('?', ['yes', 'Yes'], ['no', 'No'])], [{ id: 'yes', title: 'Yes' }, { id: 'no', title: 'No' }]],
    ['every row of every section of a list', [sections], [{ id: 'r1', title: 'One' }, { id: 'r2', title: 'Two' }]],
    ['a one-section list', [list('?', ['a', 'A'])], [{ id: 'a', title: 'A' }]],
    ['a link offers none', [link], []],
    ['a text offers none', [text('Go')], []],
    ['no prompt yet (a draft)', [undefined], []],
  ])
})
