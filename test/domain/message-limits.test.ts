import t from 'tap'
import { startToEnd } from '../../src/domain/flow-definition.js'
import { LIMITS } from '../../src/domain/message-limits.js'
import { formatProblem, validateFlow, type WorkspaceCatalog } from '../../src/domain/validate-flow.js'
import { examples } from '../helpers/decider-spec.js'

const catalog: WorkspaceCatalog = { sectorIds: new Set(), pipelines: new Map(), variables: new Map() }

/** The problems of a flow that says `body` between its start and end. */
function problemsOfText(body: string) {
  const flow = startToEnd()
  flow.nodes.push({ id: 'say', type: 'message', position: { x: 120, y: 0 }, data: { messages: [{ type: 'text', text: { body } }] } })
  flow.edges = [{ id: 'a', source: 'start', target: 'say' }, { id: 'b', source: 'say', target: 'end' }]
  return validateFlow(flow, catalog).map(formatProblem)
}

t.test('LIMITS.textBody', async (t) => {
  const longer = [`nodes[2].data.messages[0].text.body: longer than ${LIMITS.textBody} characters`]
  examples(t, problemsOfText, [
    ['a text of the limit', ['a'.repeat(LIMITS.textBody)], []],
    ['one character more', ['a'.repeat(LIMITS.textBody + 1)], longer],
    ['characters are code points: an emoji is one', ['😀'.repeat(LIMITS.textBody)], []],
    ['and one more emoji is past it', ['😀'.repeat(LIMITS.textBody + 1)], longer],
  ])
})
