import t from 'tap'
import { MAX_TAGS } from '../../src/domain/card.js'
import type { OutgoingMessage } from '../../src/domain/flow-definition.js'
import type { TypedNode } from '../../src/domain/nodes/index.js'
import type { Field } from '../../src/domain/pipeline.js'
import type { VariableType } from '../../src/domain/variables.js'
import {
  InvalidFlowError,
  SYSTEM_VARIABLES,
  assertValidFlow,
  formatProblem,
  validateFlow,
  type WorkspaceCatalog,
} from '../../src/domain/validate-flow.js'
import {
  AGENT,
  PIPELINE,
  SECTOR,
  STAGE_NEW,
  STAGE_OTHER,
  STAGE_WON,
  buttons,
  chain,
  condition,
  edge,
  end,
  flow,
  kanbanMove,
  message,
  question,
  setVariable,
  start,
  text,
  transfer,
} from '../helpers/engine.js'
import { examples } from '../helpers/decider-spec.js'
import { pipelineField } from '../helpers/pipeline-fields.js'

const field = (id: string, name: string, type: Field['type'], extra: Partial<Field> = {}): Field => pipelineField(`0190a0b0-0000-7000-8000-0000000000${id}`, name, type, extra)
const NOTE = field('d1', 'Note', 'text')
const AMOUNT = field('d2', 'Amount', 'currency', { currency: 'BRL' })
const PLAN = field('d3', 'Plan', 'select', { options: ['basic', 'pro'] })
const PAID = field('d4', 'Paid', 'boolean')
const DUE = field('d5', 'Due', 'date')

const catalog: WorkspaceCatalog = {
  sectorIds: new Set([SECTOR]),
  pipelines: new Map([[PIPELINE, { stageIds: new Set([STAGE_NEW, STAGE_WON]), fields: [NOTE, AMOUNT, PLAN, PAID, DUE] }]]),
  variables: new Map<string, VariableType>([
    ['name', 'string'],
    ['plan', 'string'],
    ['age', 'number'],
    ['photo', 'object'],
    ['vip', 'boolean'],
  ]),
}

/** The problems of a definition as the API words them, in order. */
const problems = (definition: unknown, workspace = catalog) => validateFlow(definition, workspace).map(formatProblem)

const interactive = (shape: Extract<OutgoingMessage, { type: 'interactive' }>['interactive']): OutgoingMessage => ({ type: 'interactive', interactive: shape })
const rows = (count: number, prefix = 'r') => Array.from({ length: count }, (_, i) => ({ id: `${prefix}${i}`, title: `Row ${i}` }))
const choiceQuestion = (id: string, prompt: OutgoingMessage, extra: Partial<Extract<TypedNode, { type: 'question' }>['data']> = {}) =>
  question(id, { prompt, input: { kind: 'choice' }, ...extra })

t.test('a flow using every node type, in a workspace that has what it refers to, is valid', async (t) => {
  const definition = flow(
    [
      start(),
      message('hello', text('Hi {{name}}! Session {{sessionId}}', ['greeting'])),
      choiceQuestion('ask', buttons('Which plan, {{name}}?', ['basic', 'Basic'], ['pro', 'Pro']), {
        saveAs: 'plan',
        maxRetries: 2,
        retryMessage: text('Please tap one of the buttons.'),
      }),
      question('age?', { prompt: text('How old are you?'), input: { kind: 'number' }, saveAs: 'age' }),
      condition('adult', { id: 'yes', variable: 'age', operator: 'gte', value: 18 }, { id: 'match', variable: 'plan', operator: 'regex', value: '^p' }),
      setVariable('mark', 'vip', true),
      kanbanMove('lead', { pipelineId: PIPELINE, stageId: STAGE_NEW, values: { [PLAN.id]: '{{plan}}', [AMOUNT.id]: 12.5 }, tags: ['lead'] }),
      transfer('human', 'sector', SECTOR),
      transfer('agent', 'agent', AGENT),
      end('bye'),
    ],
    [
      ...chain('start', 'hello', 'ask'),
      edge('ask', 'age?', 'basic'),
      edge('ask', 'lead', 'pro'),
      edge('ask', 'human', 'invalid'),
      edge('age?', 'adult', 'default'),
      edge('age?', 'agent', 'invalid'),
      edge('adult', 'mark', 'yes'),
      edge('adult', 'bye', 'match'),
      edge('adult', 'bye', 'default'),
      ...chain('mark', 'lead', 'human'),
    ],
  )
  t.same(problems(definition), [])
  t.doesNotThrow(() => assertValidFlow(definition, catalog))
})

t.test('a property the format does not name is refused at its path, since the saved definition is an event', async (t) => {
  const valid = flow([start(), message('hello', text('Hi')), end()], chain('start', 'hello', 'end'))
  t.same(problems(valid), [])
  const withExtras = structuredClone(valid) as unknown as { nodes: Record<string, unknown>[]; edges: Record<string, unknown>[]; [key: string]: unknown }
  withExtras.layout = { zoom: 2 }
  withExtras.nodes[1]!.note = 'mine'
  withExtras.edges[0]!.label = 'go'
  t.same(problems(withExtras), [
    'nodes[1].note: is not a property of the flow format',
    'edges[0].label: is not a property of the flow format',
    'layout: is not a property of the flow format',
  ])
})

t.test('the document itself', async (t) => {
  examples(t, problems, [
    ['a string', ['flow'], ['the definition must be a JSON object']],
    ['an array', [[]], ['the definition must be a JSON object']],
    ['nothing else is judged without nodes', [{ schemaVersion: 1, edges: [] }], ['nodes: is required']],
    ['each top-level property of the wrong type', [{ schemaVersion: 2, nodes: 'x', edges: {} }], ['schemaVersion: must be 1', 'nodes: must be an array', 'edges: must be an array']],
    ['no edges', [{ schemaVersion: 1, nodes: [start()] }], ['edges: is required']],
  ])
})

t.test('node and edge structure is reported at its path', async (t) => {
  const definition = {
    schemaVersion: 1,
    nodes: [
      { id: 'start', type: 'start', position: { x: 0, y: 'top' }, data: {} },
      { id: '', type: 'end', position: { x: 0, y: 0 }, data: {} },
      { id: 'x', position: { x: 0, y: 0 }, data: [] },
      'node',
    ],
    edges: [{ id: 'e1', source: 'start', sourceHandle: 7 }],
  }
  t.same(problems(definition), [
    'nodes[0].position.y: must be a number',
    'nodes[1].id: must not be empty',
    'nodes[2].type: is required',
    'nodes[2].data: must be an object',
    'nodes[3]: must be an object',
    'edges[0].target: is required',
    'edges[0].sourceHandle: must be a string or null',
    'nodes[1]: unreachable from the start node',
    'nodes[2]: unreachable from the start node',
  ])
})

t.test('a node type the engine does not know', async (t) => {
  const definition = { schemaVersion: 1, nodes: [start(), { id: 'w', type: 'webhook', position: { x: 0, y: 0 }, data: {} }], edges: [edge('start', 'w')] }
  t.same(problems(definition), ['nodes[1].type: unknown node type "webhook"; one of start, message, question, condition, split, setVariable, httpRequest, ai, waitForEvent, delay, runFlow, transfer, kanbanMove, end'])
})

t.test("each node's data is checked against its type's schema", async (t) => {
  const node = (id: string, type: string, data: unknown) => ({ id, type, position: { x: 0, y: 0 }, data })
  const definition = {
    schemaVersion: 1,
    nodes: [
      start(),
      node('m', 'message', { messages: [] }),
      node('m2', 'message', { messages: [{ type: 'txt', text: { body: 'x' } }, { type: 'text', text: {} }, { type: 'interactive', interactive: { type: 'button', body: { text: 'Pick' }, action: { buttons: [{ id: 'a', title: '' }] } } }] }),
      node('q', 'question', { prompt: text('Name?'), maxRetries: 11 }),
      node('c', 'condition', { rules: [{ id: 'r', variable: '1bad', operator: 'like' }] }),
      node('v', 'setVariable', { variable: 'plan', value: null }),
      node('tr', 'transfer', { targetType: 'queue', targetId: 'nope' }),
      node('k', 'kanbanMove', { pipelineId: PIPELINE }),
    ],
    edges: chain('start', 'm', 'm2', 'q'),
  }
  t.same(problems(definition), [
    'nodes[1].data.messages: must not be empty',
    'nodes[2].data.messages[0].type: must be one of text, media, template, interactive',
    'nodes[2].data.messages[1].text.body: is required',
    'nodes[2].data.messages[2].interactive.action.buttons[0].title: must not be empty',
    'nodes[3].data.input: is required',
    'nodes[3].data.maxRetries: must be at most 10',
    'nodes[4].data.rules[0].variable: must be a variable name: letters, digits and _, not starting with a digit',
    'nodes[4].data.rules[0].operator: must be "equals", "not_equals", "contains", "starts_with", "gt", "gte", "lt", "lte", "exists" or "regex"',
    'nodes[5].data.value: must be a string, a number, a boolean or an object',
    'nodes[6].data.targetType: must be "sector" or "agent"',
    'nodes[6].data.targetId: must be a UUID',
    'nodes[7].data.stageId: is required',
    'nodes[4]: unreachable from the start node',
    'nodes[5]: unreachable from the start node',
    'nodes[6]: unreachable from the start node',
    'nodes[7]: unreachable from the start node',
  ])
})

t.test('exactly one start node', async (t) => {
  examples(t, problems, [
    ['without a start, reachability is not judged', [flow([message('hi', text('Hi')), end()], chain('hi', 'end'))], ['nodes: no start node; a flow has exactly one']],
    ['a second start', [flow([start(), start('again'), end()], [...chain('start', 'end'), edge('again', 'end')])], ['nodes[1].type: a second start node (the first is nodes[0]); a flow has exactly one']],
  ])
})

t.test('node ids and edge ids are unique', async (t) => {
  const definition = flow([start(), message('hi', text('Hi')), message('hi', text('Again'))], [
    { id: 'e', source: 'start', target: 'hi' },
    { id: 'e', source: 'hi', target: 'hi' },
  ])
  t.same(problems(definition), ['nodes[2].id: duplicate node id "hi" (also nodes[1])', 'edges[1].id: duplicate edge id "e" (also edges[0])'])
})

t.test('edges connect existing nodes', async (t) => {
  t.same(problems(flow([start(), end()], [edge('start', 'end'), edge('ghost', 'end'), { id: 'x', source: 'start', target: 'x' }])), [
    'edges[1].source: no node "ghost"',
    'edges[2].target: no node "x"',
    'edges[2]: a second edge from the same exit of node "start" (the first is edges[0])',
  ])
})

t.test('handles of each node type', async (t) => {
  t.test('a choice question: one per button id, plus invalid', async (t) => {
    const ask = choiceQuestion('ask', buttons('Plan?', ['basic', 'Basic'], ['pro', 'Pro']))
    const nodes = [start(), ask, end()]
    t.same(problems(flow(nodes, [edge('start', 'ask'), edge('ask', 'end', 'basic'), edge('ask', 'end', 'pro'), edge('ask', 'end', 'invalid')])), [])
    t.same(problems(flow(nodes, [edge('start', 'ask'), edge('ask', 'end', 'gold'), edge('ask', 'end', 'default'), edge('ask', 'end')])), [
      'edges[1].sourceHandle: node "ask" (question) has no handle "gold"; its handles are basic, pro, invalid',
      'edges[2].sourceHandle: node "ask" (question) has no handle "default"; its handles are basic, pro, invalid',
      'edges[3].sourceHandle: node "ask" (question) needs a sourceHandle: one of basic, pro, invalid',
    ])
  })

  t.test('a choice question on a list: one per row id of every section', async (t) => {
    const prompt = interactive({
      type: 'list',
      body: { text: 'Pick' },
      action: { button: 'Options', sections: [{ title: 'A', rows: [{ id: 'a1', title: 'A1' }] }, { title: 'B', rows: [{ id: 'b1', title: 'B1' }] }] },
    })
    const nodes = [start(), choiceQuestion('ask', prompt), end()]
    t.same(problems(flow(nodes, [edge('start', 'ask'), edge('ask', 'end', 'a1'), edge('ask', 'end', 'b1')])), [])
    t.same(problems(flow(nodes, [edge('start', 'ask'), edge('ask', 'end', 'c1')])), [
      'edges[1].sourceHandle: node "ask" (question) has no handle "c1"; its handles are a1, b1, invalid',
    ])
  })

  t.test('other questions: default and invalid', async (t) => {
    const nodes = [start(), question('q', { prompt: text('Email?'), input: { kind: 'email' } }), end()]
    t.same(problems(flow(nodes, [edge('start', 'q'), edge('q', 'end', 'default'), edge('q', 'end', 'invalid')])), [])
    t.same(problems(flow(nodes, [edge('start', 'q'), edge('q', 'end', 'ok')])), [
      'edges[1].sourceHandle: node "q" (question) has no handle "ok"; its handles are default, invalid',
    ])
  })

  t.test('a condition: one per rule id, plus default', async (t) => {
    const nodes = [start(), condition('c', { id: 'adult', variable: 'age', operator: 'gte', value: 18 }), end()]
    t.same(problems(flow(nodes, [edge('start', 'c'), edge('c', 'end', 'adult'), edge('c', 'end', 'default')])), [])
    t.same(problems(flow(nodes, [edge('start', 'c'), edge('c', 'end', 'invalid')])), [
      'edges[1].sourceHandle: node "c" (condition) has no handle "invalid"; its handles are adult, default',
    ])
  })

  t.test('start, message, setVariable and kanbanMove: one unnamed exit', async (t) => {
    const nodes = [
      start(),
      message('m', text('Hi')),
      setVariable('v', 'plan', 'pro'),
      kanbanMove('k', { pipelineId: PIPELINE, stageId: STAGE_WON }),
      end(),
    ]
    t.same(problems(flow(nodes, chain('start', 'm', 'v', 'k', 'end'))), [])
    t.same(problems(flow(nodes, [edge('start', 'm', 'default'), edge('m', 'v', 'next'), { ...edge('v', 'k'), sourceHandle: null }, edge('k', 'end', '')])), [
      'edges[0].sourceHandle: node "start" (start) has one unnamed exit; leave sourceHandle out',
      'edges[1].sourceHandle: node "m" (message) has one unnamed exit; leave sourceHandle out',
      'edges[3].sourceHandle: node "k" (kanbanMove) has one unnamed exit; leave sourceHandle out',
    ], 'a null sourceHandle is the unnamed exit')
  })

  t.test('transfer and end: none', async (t) => {
    const nodes = [start(), transfer('human', 'sector', SECTOR), end(), end('other')]
    t.same(problems(flow(nodes, [edge('start', 'human'), edge('human', 'end'), edge('end', 'other')])), [
      'edges[1].source: node "human" (transfer) has no exits',
      'edges[2].source: node "end" (end) has no exits',
    ])
  })

  t.test('at most one edge per handle', async (t) => {
    const nodes = [start(), question('q', { prompt: text('Age?'), input: { kind: 'number' } }), end(), end('b')]
    t.same(problems(flow(nodes, [edge('start', 'q'), edge('q', 'end', 'default'), { ...edge('q', 'b', 'default'), id: 'again' }, edge('q', 'b', 'invalid')])), [
      'edges[2]: a second edge from the same exit of node "q" (the first is edges[1])',
    ])
  })
})

t.test('choices', async (t) => {
  t.test("a choice question's prompt is an interactive button or list message", async (t) => {
    const cta = interactive({ type: 'cta_url', body: { text: 'Visit' }, action: { name: 'cta_url', parameters: { display_text: 'Open', url: 'https://example.com' } } })
    for (const prompt of [text('Yes or no?'), cta]) {
      t.same(problems(flow([start(), choiceQuestion('ask', prompt)], chain('start', 'ask'))), [
        "nodes[1].data.prompt: a choice question's prompt must be an interactive button or list message",
      ])
    }
  })

  t.test('choice ids are distinct handles, and none is "invalid"', async (t) => {
    const prompt = buttons('Pick', ['a', 'A'], ['a', 'Again'], ['invalid', 'Not valid'])
    t.same(problems(flow([start(), choiceQuestion('ask', prompt)], chain('start', 'ask'))), [
      'nodes[1].data.prompt.interactive.action.buttons[1].id: duplicate id "a"; each one is a handle of its own',
      'nodes[1].data.prompt.interactive.action.buttons[2].id: "invalid" is the handle of invalid replies; choose another id',
    ])
    t.same(problems(flow([start(), question('ask', { prompt, input: { kind: 'text' } })], chain('start', 'ask'))), [], 'a text question ignores its buttons')
  })

  t.test('rule ids are distinct handles, and none is "default"', async (t) => {
    const rules = [
      { id: 'r', variable: 'age', operator: 'exists' as const },
      { id: 'r', variable: 'age', operator: 'exists' as const },
      { id: 'default', variable: 'age', operator: 'exists' as const },
    ]
    t.same(problems(flow([start(), condition('c', ...rules)], chain('start', 'c'))), [
      'nodes[1].data.rules[1].id: duplicate id "r"; each one is a handle of its own',
      'nodes[1].data.rules[2].id: "default" is the handle of the default exit; choose another id',
    ])
  })
})

t.test("WhatsApp's limits on every outgoing message", async (t) => {
  const only = (...messages: OutgoingMessage[]) => problems(flow([start(), message('m', ...messages)], chain('start', 'm')))

  t.test('buttons: at most 3, titles up to 20 characters', async (t) => {
    t.same(only(buttons('Pick', ['a', 'x'.repeat(20)], ['b', '😀'.repeat(20)], ['c', 'C'])), [], '20 characters, emoji counted once')
    t.same(only(buttons('Pick', ['a', 'A'], ['b', 'x'.repeat(21)], ['c', 'C'], ['d', 'D'])), [
      'nodes[1].data.messages[0].interactive.action.buttons: more than 3 buttons (4)',
      'nodes[1].data.messages[0].interactive.action.buttons[1].title: longer than 20 characters',
    ])
  })

  t.test('lists: at most 10 rows in all sections, row title 24, description 72, button and section title', async (t) => {
    const listOf = (sections: { title: string; rows: { id: string; title: string; description?: string }[] }[], button = 'Options') =>
      interactive({ type: 'list', body: { text: 'Pick' }, action: { button, sections } })
    t.same(only(listOf([{ title: 'A', rows: rows(5, 'a') }, { title: 'B', rows: rows(5, 'b') }])), [])
    t.same(only(listOf([{ title: 'A', rows: rows(6, 'a') }, { title: 'B', rows: rows(5, 'b') }])), [
      'nodes[1].data.messages[0].interactive.action.sections: more than 10 rows in total (11)',
    ])
    const long = listOf([{ title: 's'.repeat(25), rows: [{ id: 'r', title: 't'.repeat(25), description: 'd'.repeat(73) }, { id: 'q', title: 't'.repeat(24), description: 'd'.repeat(72) }] }], 'b'.repeat(21))
    t.same(only(long), [
      'nodes[1].data.messages[0].interactive.action.button: longer than 20 characters',
      'nodes[1].data.messages[0].interactive.action.sections[0].title: longer than 24 characters',
      'nodes[1].data.messages[0].interactive.action.sections[0].rows[0].title: longer than 24 characters',
      'nodes[1].data.messages[0].interactive.action.sections[0].rows[0].description: longer than 72 characters',
    ])
  })

  t.test('body 1024 and footer 60 on interactive messages; text 4096, captions 1024, link labels 20', async (t) => {
    const withFooter = (body: string, footer: string) =>
      interactive({ type: 'button', body: { text: body }, footer: { text: footer }, action: { buttons: [{ id: 'a', title: 'A' }] } })
    t.same(only(withFooter('b'.repeat(1024), 'f'.repeat(60))), [])
    t.same(only(withFooter('b'.repeat(1025), 'f'.repeat(61)), text('t'.repeat(4097)), text('t'.repeat(4096))), [
      'nodes[1].data.messages[0].interactive.body.text: longer than 1024 characters',
      'nodes[1].data.messages[0].interactive.footer.text: longer than 60 characters',
      'nodes[1].data.messages[1].text.body: longer than 4096 characters',
    ])
    const media: OutgoingMessage = { type: 'media', media: { type: 'image', mimeType: 'image/png', url: 'https://x.test/a.png', caption: 'c'.repeat(1025) } }
    const cta = interactive({ type: 'cta_url', body: { text: 'Visit' }, action: { name: 'cta_url', parameters: { display_text: 'l'.repeat(21), url: 'https://x.test' } } })
    t.same(only(media, cta), [
      'nodes[1].data.messages[0].media.caption: longer than 1024 characters',
      'nodes[1].data.messages[1].interactive.action.parameters.display_text: longer than 20 characters',
    ])
  })

  t.test("a question's prompt and retry message are checked too", async (t) => {
    const ask = choiceQuestion('ask', buttons('Pick', ['a', 'x'.repeat(21)]), { retryMessage: buttons('Again', ['a', 'y'.repeat(22)]) })
    t.same(problems(flow([start(), ask], chain('start', 'ask'))), [
      'nodes[1].data.prompt.interactive.action.buttons[0].title: longer than 20 characters',
      'nodes[1].data.retryMessage.interactive.action.buttons[0].title: longer than 20 characters',
    ])
  })

  t.test('limits are reported beside schema problems of the same message', async (t) => {
    t.same(only(interactive({ type: 'button', body: { text: 'Pick' }, action: { buttons: [{ id: 'a', title: 'x'.repeat(21) }, { id: '', title: 'B' }] } })), [
      'nodes[1].data.messages[0].interactive.action.buttons[1].id: must not be empty',
      'nodes[1].data.messages[0].interactive.action.buttons[0].title: longer than 20 characters',
    ])
  })
})

t.test('transfer targets a sector of the workspace', async (t) => {
  const other = '0190a0b0-0000-7000-8000-0000000000ff'
  t.same(problems(flow([start(), transfer('t', 'sector', other)], chain('start', 't'))), [`nodes[1].data.targetId: no sector "${other}" in this workspace`])
  t.same(problems(flow([start(), transfer('t', 'agent', other)], chain('start', 't'))), [], 'agents are not a workspace resource')
})

t.test('kanbanMove targets a pipeline of the workspace and one of its stages', async (t) => {
  const otherPipeline = '0190a0b0-0000-7000-8000-0000000000fe'
  t.same(problems(flow([start(), kanbanMove('k', { pipelineId: otherPipeline, stageId: STAGE_NEW })], chain('start', 'k'))), [
    `nodes[1].data.pipelineId: no pipeline "${otherPipeline}" in this workspace`,
  ])
  t.same(problems(flow([start(), kanbanMove('k', { pipelineId: PIPELINE, stageId: STAGE_OTHER })], chain('start', 'k'))), [
    `nodes[1].data.stageId: pipeline "${PIPELINE}" has no stage "${STAGE_OTHER}"`,
  ])
})

t.test('kanbanMove tags follow the card tag rules', async (t) => {
  const moving = (tags: string[]) => problems(flow([start(), kanbanMove('k', { pipelineId: PIPELINE, stageId: STAGE_NEW, tags })], chain('start', 'k')))
  t.same(moving(['lead', 'x'.repeat(100)]), [], 'a tag of 100 characters')
  t.same(moving(Array.from({ length: MAX_TAGS }, (_, i) => `t${i}`)), [], `${MAX_TAGS} tags`)
  t.same(moving(['a,b']), ['nodes[1].data.tags[0]: must have no commas and no blanks at either end'])
  t.same(moving(['ok', ' lead', 'lead ', '\tx']), [
    'nodes[1].data.tags[1]: must have no commas and no blanks at either end',
    'nodes[1].data.tags[2]: must have no commas and no blanks at either end',
    'nodes[1].data.tags[3]: must have no commas and no blanks at either end',
  ])
  t.same(moving(['x'.repeat(101)]), ['nodes[1].data.tags[0]: longer than 100 characters'])
  t.same(moving(['']), ['nodes[1].data.tags[0]: must not be empty'], 'one problem for an empty tag')
  t.same(moving(['lead', 'vip', 'lead']), ['nodes[1].data.tags: must not repeat an item; "lead" is there more than once'])
  t.same(moving(Array.from({ length: MAX_TAGS + 1 }, (_, i) => `t${i}`)), [`nodes[1].data.tags: more than ${MAX_TAGS} items (${MAX_TAGS + 1})`])
})

t.test('kanbanMove values follow the pipeline fields', async (t) => {
  const setting = (values: Record<string, string | number | boolean>) =>
    problems(flow([start(), kanbanMove('k', { pipelineId: PIPELINE, stageId: STAGE_NEW, values })], chain('start', 'k')))
  t.same(setting({ [NOTE.id]: 'hello', [AMOUNT.id]: 10, [PLAN.id]: 'pro', [PAID.id]: false, [DUE.id]: '2026-02-28' }), [], 'a value of each type')
  t.same(setting({ [NOTE.id]: '{{name}}', [PLAN.id]: '{{plan}}', [DUE.id]: 'due {{name}}' }), [], 'a template into a field that takes text is judged when it runs')
  const unknownField = '0190a0b0-0000-7000-8000-0000000000ff'
  t.same(setting({ [unknownField]: 'x' }), [`nodes[1].data.values["${unknownField}"]: pipeline "${PIPELINE}" has no field "${unknownField}"`])
  t.same(setting({ [AMOUNT.id]: '12', [PLAN.id]: 'gold', [PAID.id]: 'yes', [DUE.id]: '2026-02-30', [NOTE.id]: '' }), [
    `nodes[1].data.values["${AMOUNT.id}"]: field "Amount" (currency) takes a number`,
    `nodes[1].data.values["${PLAN.id}"]: field "Plan" (select) takes one of: basic, pro`,
    `nodes[1].data.values["${PAID.id}"]: field "Paid" (boolean) takes true or false`,
    `nodes[1].data.values["${DUE.id}"]: field "Due" (date) takes a date as YYYY-MM-DD`,
    `nodes[1].data.values["${NOTE.id}"]: field "Note" (text) takes a non-empty string of at most 10000 characters`,
  ])
  t.same(setting({ [AMOUNT.id]: '{{age}}', [NOTE.id]: 5 }), [
    `nodes[1].data.values["${AMOUNT.id}"]: field "Amount" (currency) takes a number; a value with {{…}} is text`,
    `nodes[1].data.values["${NOTE.id}"]: field "Note" (text) takes a non-empty string of at most 10000 characters`,
  ])
})

t.test('variables', async (t) => {
  t.test('the system variables', async (t) => {
    t.same([...SYSTEM_VARIABLES], ['sessionId', 'externalId', 'flowId', 'workspaceId', 'lastMessage'])
    const all = SYSTEM_VARIABLES.map((name) => `{{${name}}}`).join(' ')
    t.same(problems(flow([start(), message('m', text(all))], chain('start', 'm'))), [])
  })

  t.test('templates anywhere in node data read known variables only', async (t) => {
    const definition = flow(
      [
        start(),
        message('m', text('Hi {{ name }}, {{nickname}} {{customer.address.city}} {{photo.url}} {{not a placeholder}}'), buttons('{{who}}?', ['a', '{{title}}'])),
        kanbanMove('k', { pipelineId: PIPELINE, stageId: STAGE_NEW, values: { [NOTE.id]: '{{missing}}' } }),
        setVariable('v', 'photo', { kept: '{{asWritten}}' }),
      ],
      chain('start', 'm', 'k', 'v'),
    )
    t.same(problems(definition), [
      'nodes[1].data.messages[0].text.body: unknown variable "nickname"',
      'nodes[1].data.messages[0].text.body: unknown variable "customer"',
      'nodes[1].data.messages[1].interactive.body.text: unknown variable "who"',
      'nodes[1].data.messages[1].interactive.action.buttons[0].title: unknown variable "title"',
      `nodes[2].data.values["${NOTE.id}"]: unknown variable "missing"`,
    ], 'an object value of setVariable is copied as written, so it holds no placeholders')
  })

  t.test('names this flow saves can be read, and are reported once where they are saved when not in the workspace', async (t) => {
    const definition = flow(
      [
        start(),
        question('q', { prompt: text('Color?'), input: { kind: 'text' }, saveAs: 'color' }),
        setVariable('v', 'size', 'L'),
        message('m', text('{{color}} {{size}} {{plan}}')),
        condition('c', { id: 'r', variable: 'color', operator: 'exists' }, { id: 's', variable: 'mood', operator: 'exists' }),
      ],
      [edge('start', 'q'), edge('q', 'v', 'default'), ...chain('v', 'm', 'c')],
    )
    t.same(problems(definition), [
      'nodes[1].data.saveAs: no variable "color" in this workspace',
      'nodes[2].data.variable: no variable "size" in this workspace',
      'nodes[4].data.rules[1].variable: unknown variable "mood"',
    ])
  })

  t.test('system variables are read-only', async (t) => {
    const definition = flow(
      [start(), question('q', { prompt: text('?'), input: { kind: 'text' }, saveAs: 'lastMessage' }), setVariable('v', 'sessionId', 'x')],
      [edge('start', 'q'), edge('q', 'v', 'default')],
    )
    t.same(problems(definition), ['nodes[1].data.saveAs: "lastMessage" is a system variable; it is read-only', 'nodes[2].data.variable: "sessionId" is a system variable; it is read-only'])
  })

  t.test('what is saved matches the variable type', async (t) => {
    const ask = (id: string, kind: 'text' | 'number' | 'media' | 'choice', saveAs: string) =>
      question(id, { prompt: kind === 'choice' ? buttons('?', ['a', 'A']) : text('?'), input: { kind }, saveAs })
    const nodes = [
      start(),
      ask('q1', 'number', 'name'),
      ask('q2', 'text', 'age'),
      ask('q3', 'media', 'photo'),
      ask('q4', 'choice', 'plan'),
      setVariable('v1', 'age', '{{age}}'),
      setVariable('v2', 'vip', 1),
      setVariable('v3', 'photo', { url: 'x' }),
      setVariable('v4', 'age', 42),
    ]
    const edges = [edge('start', 'q1'), edge('q1', 'q2', 'default'), edge('q2', 'q3', 'default'), edge('q3', 'q4', 'default'), edge('q4', 'v1', 'a'), ...chain('v1', 'v2', 'v3', 'v4')]
    t.same(problems(flow(nodes, edges)), [
      'nodes[1].data.saveAs: variable "name" holds a string, but this question saves a number',
      'nodes[2].data.saveAs: variable "age" holds a number, but this question saves a string',
      'nodes[5].data.variable: variable "age" holds a number, but this value is a string',
      'nodes[6].data.variable: variable "vip" holds a boolean, but this value is a number',
    ])
  })
})

t.test('condition rules that could never be judged', async (t) => {
  const definition = flow(
    [
      start(),
      condition(
        'c',
        { id: 'a', variable: 'name', operator: 'regex', value: '(unclosed' },
        { id: 'b', variable: 'name', operator: 'regex', value: '(?=lookahead)' },
        { id: 'c', variable: 'age', operator: 'gt', value: 'ten' },
        { id: 'd', variable: 'age', operator: 'lt' },
        { id: 'e', variable: 'age', operator: 'lte', value: '1,5' },
      ),
    ],
    chain('start', 'c'),
  )
  const found = problems(definition)
  t.equal(found.length, 4)
  t.match(found[0], /^nodes\[1\]\.data\.rules\[0\]\.value: not a valid regular expression: /)
  t.match(found[1], /^nodes\[1\]\.data\.rules\[1\]\.value: not a valid regular expression: /, 'RE2 syntax: no lookarounds')
  t.same(found.slice(2), ['nodes[1].data.rules[2].value: gt compares numbers; value must be a number', 'nodes[1].data.rules[3].value: lt compares numbers; value must be a number'])
})

t.test('nodes that no path from the start reaches', async (t) => {
  const definition = flow([start(), message('a', text('A')), message('b', text('B')), message('c', text('C')), end()], [...chain('start', 'a', 'end'), ...chain('b', 'c')])
  t.same(problems(definition), ['nodes[2]: unreachable from the start node', 'nodes[3]: unreachable from the start node'])
  t.same(problems(flow([start(), message('a', text('A'))], [...chain('start', 'a'), edge('a', 'start')])), [], 'a loop back to the start is fine')
})

t.test('every problem is reported at once, and the error joins them', async (t) => {
  const definition = flow(
    [start(), choiceQuestion('ask', buttons('Pick', ['a', 'x'.repeat(21)])), transfer('t', 'sector', STAGE_NEW)],
    [edge('start', 'ask'), edge('ask', 't', 'b'), edge('ask', 'x', 'a')],
  )
  const error = t.throws(() => assertValidFlow(definition, catalog)) as InvalidFlowError
  t.type(error, InvalidFlowError)
  t.equal(error.statusCode, 400)
  t.same(error.problems, [
    { path: 'nodes[1].data.prompt.interactive.action.buttons[0].title', message: 'longer than 20 characters' },
    { path: 'nodes[2].data.targetId', message: `no sector "${STAGE_NEW}" in this workspace` },
    { path: 'edges[1].sourceHandle', message: 'node "ask" (question) has no handle "b"; its handles are a, invalid' },
    { path: 'edges[2].target', message: 'no node "x"' },
  ])
  t.equal(
    error.message,
    `nodes[1].data.prompt.interactive.action.buttons[0].title: longer than 20 characters; nodes[2].data.targetId: no sector "${STAGE_NEW}" in this workspace; ` +
      'edges[1].sourceHandle: node "ask" (question) has no handle "b"; its handles are a, invalid; edges[2].target: no node "x"',
  )
})

t.test('an empty workspace refers to nothing', async (t) => {
  const empty: WorkspaceCatalog = { sectorIds: new Set(), pipelines: new Map(), variables: new Map() }
  t.same(problems(flow([start(), message('m', text('Hi {{name}}')), end()], chain('start', 'm', 'end')), empty), ['nodes[1].data.messages[0].text.body: unknown variable "name"'])
})
