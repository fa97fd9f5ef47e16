import t from 'tap'
import { FlowDefinition, OutgoingMessage, startToEnd, VariableName } from '../../src/domain/flow-definition.js'
import { validateFlow } from '../../src/domain/validate-flow.js'
import { accepts, examples } from '../helpers/decider-spec.js'

const withTtl = (sessionTtlSeconds: number) => ({ ...startToEnd(), settings: { sessionTtlSeconds } })

t.test('FlowDefinition', async (t) => {
  examples(t, accepts(FlowDefinition), [
    ['Start to End', [startToEnd()], true],
    ['another schema version', [{ ...startToEnd(), schemaVersion: 2 }], false],
    ['an edge without its target', [{ ...startToEnd(), edges: [{ id: 'e', source: 'start' }] }], false],
    ['a node without a position', [{ ...startToEnd(), nodes: [{ id: 'start', type: 'start', data: {} }] }], false],
    ['a session ttl of a minute', [withTtl(60)], true],
    ['under a minute', [withTtl(59)], false],
    ['thirty days', [withTtl(30 * 24 * 3600)], true],
    ['past thirty days', [withTtl(30 * 24 * 3600 + 1)], false],
  ])
})

t.test('startToEnd', async (t) => {
  t.same(validateFlow(startToEnd(), { sectorIds: new Set(), pipelines: new Map(), variables: new Map() }), [], 'a new flow is valid in any workspace')
  const first = startToEnd()
  first.nodes.pop()
  t.equal(startToEnd().nodes.length, 2, 'each call gives a fresh document')
})

t.test('OutgoingMessage', async (t) => {
  examples(t, accepts(OutgoingMessage), [
    ['a text', [{ type: 'text', text: { body: 'Hi' } }], true],
    ['an empty text', [{ type: 'text', text: { body: '' } }], false],
    ['a media of a known kind', [{ type: 'media', media: { type: 'image', mimeType: 'image/png', url: 'https://x/y.png' } }], true],
    ['a media of no known kind', [{ type: 'media', media: { type: 'gif', mimeType: 'image/gif', url: 'https://x/y.gif' } }], false],
    ['a template', [{ type: 'template', template: { id: 'welcome', params: [] } }], true],
    ['buttons', [{ type: 'interactive', interactive: { type: 'button', body: { text: 'Pick' }, action: { buttons: [{ id: 'a', title: 'A' }] } } }], true],
    ['no buttons', [{ type: 'interactive', interactive: { type: 'button', body: { text: 'Pick' }, action: { buttons: [] } } }], false],
    ['a list', [{ type: 'interactive', interactive: { type: 'list', body: { text: 'Pick' }, action: { button: 'Open', sections: [{ title: 'S', rows: [{ id: 'r', title: 'R' }] }] } } }], true],
    ['a link button', [{ type: 'interactive', interactive: { type: 'cta_url', body: { text: 'Go' }, action: { name: 'cta_url', parameters: { display_text: 'Open', url: 'https://x' } } } }], true],
  ])
})

t.test('VariableName', async (t) => {
  examples(t, accepts(VariableName), [
    ['letters, digits and underscores', ['first_name2'], true],
    ['a leading underscore', ['_tmp'], true],
    ['a leading digit', ['2nd'], false],
    ['a dot (that is a path)', ['a.b'], false],
    ['a blank', ['first name'], false],
  ])
})
