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

/**
 * The echo flow with an AI step in place of its condition: the connection's model classifies each
 * reply, and a goodbye ends the session as in the echo flow.
 */
export const classifyingEchoFlow = (connectionId: string) => ({
  ...echoFlow,
  nodes: echoFlow.nodes.map((node) =>
    node.id === 'check'
      ? { ...node, type: 'ai', data: { connectionId, mode: 'classify', instructions: 'Tell a goodbye apart', labels: [{ id: 'bye', description: 'says goodbye' }, { id: 'thanks', description: 'says thank you' }] } }
      : node,
  ),
  edges: [...echoFlow.edges.map((edge) => (edge.id === 'd' ? { ...edge, sourceHandle: 'other' } : edge)), { id: 'f', source: 'check', sourceHandle: 'thanks', target: 'say' }],
})

/** The echo flow, its answer reworded: "You typed hi" where it said "You said hi". */
export const typedEchoFlow = {
  ...echoFlow,
  nodes: echoFlow.nodes.map((node) => (node.id === 'say' ? { ...node, data: { messages: [{ type: 'text', text: { body: 'You typed {{said}}' } }] } } : node)),
}

/** A flow that waits `seconds` at the delay `pause` (a timer; its first turn says nothing), then says `Time is up` and ends. */
export const pauseFlow = (seconds: number) => ({
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
    { id: 'pause', type: 'delay', position: { x: 200, y: 0 }, data: { seconds } },
    { id: 'done', type: 'message', position: { x: 400, y: 0 }, data: { messages: [{ type: 'text', text: { body: 'Time is up' } }] } },
  ],
  edges: [
    { id: 'a', source: 'start', target: 'pause' },
    { id: 'b', source: 'pause', target: 'done' },
  ],
})

/**
 * A flow that greets, asks for a plan by buttons, and for `pro` moves a lead card through two
 * stages and transfers to a sector; `basic` ends, an invalid reply transfers. `lead` adds to the
 * card moved into the first stage (values, tags); `retryMessage` is the question's retry prompt.
 */
export function plansFlow(to: {
  pipelineId: string
  stageIds: [string, string]
  sectorId: string
  leadValues?: Record<string, string>
  retryMessage?: { type: 'text'; text: { body: string } }
  greetingTags?: string[]
}) {
  const at = (x: number, y = 0) => ({ x, y })
  return {
    schemaVersion: 1,
    nodes: [
      { id: 'start', type: 'start', position: at(0), data: {} },
      { id: 'hello', type: 'message', position: at(200), data: { messages: [{ type: 'text', text: { body: 'Hi {{name}}!' }, ...(to.greetingTags && { tags: to.greetingTags }) }] } },
      {
        id: 'ask',
        type: 'question',
        position: at(400),
        data: {
          prompt: { type: 'interactive', interactive: { type: 'button', body: { text: 'Which plan?' }, action: { buttons: [{ id: 'basic', title: 'Basic' }, { id: 'pro', title: 'Pro' }] } } },
          input: { kind: 'choice' },
          saveAs: 'plan',
          maxRetries: 1,
          ...(to.retryMessage && { retryMessage: to.retryMessage }),
        },
      },
      { id: 'check', type: 'condition', position: at(600), data: { rules: [{ id: 'isPro', variable: 'plan', operator: 'equals', value: 'pro' }] } },
      { id: 'lead', type: 'kanbanMove', position: at(800), data: { pipelineId: to.pipelineId, stageId: to.stageIds[0], ...(to.leadValues && { values: to.leadValues }), tags: ['lead'] } },
      { id: 'qualify', type: 'kanbanMove', position: at(1000), data: { pipelineId: to.pipelineId, stageId: to.stageIds[1] } },
      { id: 'human', type: 'transfer', position: at(1200), data: { targetType: 'sector', targetId: to.sectorId } },
      { id: 'bye', type: 'end', position: at(600, 200), data: {} },
    ],
    edges: [
      { id: 'e1', source: 'start', target: 'hello' },
      { id: 'e2', source: 'hello', target: 'ask' },
      { id: 'e3', source: 'ask', sourceHandle: 'basic', target: 'bye' },
      { id: 'e4', source: 'ask', sourceHandle: 'pro', target: 'check' },
      { id: 'e5', source: 'ask', sourceHandle: 'invalid', target: 'human' },
      { id: 'e6', source: 'check', sourceHandle: 'isPro', target: 'lead' },
      { id: 'e7', source: 'check', sourceHandle: 'default', target: 'bye' },
      { id: 'e8', source: 'lead', target: 'qualify' },
      { id: 'e9', source: 'qualify', target: 'human' },
    ],
  }
}
