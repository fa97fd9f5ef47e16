/** An echo flow: asks, repeats the answer (saved in the workspace variable `said`), asks again; `bye` ends it. */
export const echoFlow = {
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
    { id: 'ask', type: 'question', position: { x: 200, y: 0 }, data: { prompt: { type: 'text', text: { body: 'Say something' } }, input: { kind: 'text' }, saveAs: 'said' } },
    { id: 'check', type: 'condition', position: { x: 400, y: 0 }, data: { rules: [{ id: 'bye', variable: 'said', operator: 'equals', value: 'bye' }] } },
    { id: 'say', type: 'message', position: { x: 600, y: 0 }, data: { messages: [{ type: 'text', text: { body: 'You said {{said}}' } }] } },
    { id: 'end', type: 'end', position: { x: 600, y: 200 }, data: {} },
  ],
  edges: [
    { id: 'a', source: 'start', target: 'ask' },
    { id: 'b', source: 'ask', sourceHandle: 'default', target: 'check' },
    { id: 'c', source: 'check', sourceHandle: 'bye', target: 'end' },
    { id: 'd', source: 'check', sourceHandle: 'default', target: 'say' },
    { id: 'e', source: 'say', target: 'ask' },
  ],
}
