import { validateFlow } from '../src/engine/validate-flow.js'
const catalog = { sectorIds: new Set<string>(), pipelines: new Map(), variables: new Map([['plan', 'string' as const]]) }
const def = {
  schemaVersion: 1,
  nodes: [
    { id: 's', type: 'start', position: { x: 0, y: 0 }, data: {} },
    { id: 'm', type: 'message', position: { x: 0, y: 0 }, data: { messages: [
      { type: 'interactive', interactive: { type: 'button', body: { text: 'Hi {{who}} {{plan}} {{sessionId.x}}' }, action: { buttons: [{ id: 'a', title: 'x'.repeat(21) }, { id: 'b', title: '' }] } } },
      { type: 'texto', text: { body: 'a' } },
      { type: 'text', text: {} },
      'str',
    ] } },
    { id: 'v', type: 'setVariable', position: { x: 0, y: 0 }, data: { variable: 'x', value: [1] } },
    { id: 'q', type: 'bogus', position: { x: 0, y: 0 }, data: {} },
  ],
  edges: [{ id: 'e', source: 's', target: 'm', sourceHandle: 5 }, { id: 'e', source: 'm', target: 'zz' }],
}
for (const p of validateFlow(def, catalog)) console.log(`${p.path}: ${p.message}`)
