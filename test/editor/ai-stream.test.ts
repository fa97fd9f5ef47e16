import type { Locator } from 'playwright-core'
import t from 'tap'
import { browserSkipReason } from '../helpers/browser.js'
import { startChatCompletionsServer, wordCount } from '../helpers/chat-completions-server.js'
import { LOOKS } from '../helpers/dashboard.js'
import { captureEditor, checkEditorLayout, openEditor, openEditorSetupCalling, sampleFlow } from '../helpers/editor.js'
import { eventually } from '../helpers/wait.js'

// An AI step's reply in the editor's test panel, against the real service and engine and a real
// HTTPS chat completions endpoint that streams its scripted answer a word every 150 ms: the reply
// grows in a bubble of its own as the model writes it, becomes the conversation's message once
// its turn lands (once, never twice), goes if the step fails, and the debug view shows the prompt
// by role and the answer with its tokens.

const skip = browserSkipReason()
t.setTimeout(300_000)

const MODEL_KEY = 'sk-test-8d2e61b0c4'
const QUESTION = { en: 'What would you like to know?', pt: 'O que você gostaria de saber?' }
const ASKED = { en: 'How long does shipping take?', pt: 'Quanto tempo leva a entrega?' }
const REPLY = {
  en: 'Shipping takes three days to most places, and returns are free for thirty days after the parcel arrives at your door, so you can try everything at home.',
  pt: 'A entrega leva três dias para a maioria dos lugares, e as devoluções são grátis por trinta dias depois que o pacote chega à sua porta, então dá para provar tudo em casa.',
}
const INSTRUCTIONS = 'You answer questions about the shop.'
const KNOWLEDGE = 'Shipping takes 3 days. Returns are free for 30 days.'
const ROLES = {
  en: { system: 'Instructions (system)', assistant: 'Bot (assistant)', user: 'Contact (user)', answer: "The model's answer", tokens: /(\d+) prompt tokens · (\d+) answer tokens/ },
  pt: { system: 'Instruções (system)', assistant: 'Bot (assistant)', user: 'Contato (user)', answer: 'A resposta do modelo', tokens: /(\d+) tokens de entrada · (\d+) tokens de resposta/ },
}

const text = (body: string) => ({ type: 'text', text: { body } })

/** start → ask (a text question) → answer (an AI reply) → ask again; a failed reply says sorry and ends. */
const askingFlow = (connectionId: string, lang: 'en' | 'pt') => ({
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
    { id: 'ask', type: 'question', position: { x: 240, y: 0 }, data: { prompt: text(QUESTION[lang]), input: { kind: 'text' } } },
    { id: 'answer', type: 'ai', position: { x: 520, y: 0 }, data: { connectionId, mode: 'reply', instructions: INSTRUCTIONS, knowledge: KNOWLEDGE } },
    { id: 'sorry', type: 'message', position: { x: 800, y: 120 }, data: { messages: [text('Our assistant is away.')] } },
    { id: 'end', type: 'end', position: { x: 1040, y: 120 }, data: {} },
  ],
  edges: [
    { id: 'e1', source: 'start', target: 'ask' },
    { id: 'e2', source: 'ask', sourceHandle: 'default', target: 'answer' },
    { id: 'e3', source: 'answer', sourceHandle: 'success', target: 'ask' },
    { id: 'e4', source: 'answer', sourceHandle: 'error', target: 'sorry' },
    { id: 'e5', source: 'sorry', target: 'end' },
  ],
})

/** The text of the reply being written, '' while there is none. */
const writtenSoFar = async (writing: Locator): Promise<string> => ((await writing.count()) === 0 ? '' : (await writing.locator('.chat-text').innerText()).trim())

t.test('an AI reply in the test panel', { skip }, async (t) => {
  const model = await startChatCompletionsServer(MODEL_KEY)
  t.teardown(() => model.close())
  // A word every 150 ms: the reply takes seconds to write, long enough to be seen growing.
  model.streamGapMs = 150
  const setup = await openEditorSetupCalling(t, model.caFile, { engine: true })
  const { call } = setup
  await call('PUT', '/v1/secrets/model_key', { value: MODEL_KEY })
  const created = await call('POST', '/v1/ai-connections', { name: 'Shop assistant', baseUrl: model.baseUrl, apiKeySecret: 'model_key', model: 'test-model' })
  const connectionId = String(created.headers.location).split('/').pop()!

  for (const look of LOOKS) {
    t.test(`the reply grows as it is written, then is the conversation's message, in ${look.lang} and ${look.theme}`, async (t) => {
      const { lang } = look
      const reply = REPLY[lang]
      model.answerWith(() => reply)
      const flowId = await sampleFlow(setup, `Assistant ${lang} ${look.theme}`, askingFlow(connectionId, lang))
      const opened = await openEditor(t, setup, flowId, look)
      const { editor, frame } = opened
      await editor.getByTestId('test-toggle').click()
      const panel = editor.getByTestId('test-panel')
      await panel.getByTestId('test-start').click()
      const chat = panel.getByTestId('test-chat')
      await chat.getByText(QUESTION[lang]).waitFor()

      // The person asks; the model's words come one by one.
      const asked = model.requests.length
      await panel.getByTestId('test-reply').fill(ASKED[lang])
      await panel.getByTestId('test-reply').press('Enter')
      const writing = chat.getByTestId('test-writing')
      await writing.locator('.chat-text').waitFor()
      const first = await writtenSoFar(writing)
      await eventually(`the reply growing past "${first}"`, async () => ((await writtenSoFar(writing)).length > first.length ? true : undefined), 10_000)
      const second = await writtenSoFar(writing)
      t.ok(first.length > 0 && second.length > first.length, `the bubble grows: "${first}", then "${second}"`)
      t.ok(reply.startsWith(first) && reply.startsWith(second), 'each time with the beginning of the reply')
      t.ok(second.length < reply.length, 'while the model is still writing it')
      t.equal(await writing.getAttribute('aria-busy'), 'true', 'the reply being written is busy for screen readers')
      t.equal(await writing.getAttribute('aria-live'), 'polite', 'and polite')
      t.equal(await frame.evaluate(`getComputedStyle(document.querySelector('.test-chat-writing .chat-bubble')).borderStyle`), 'dashed', 'its bubble looks unfinished')
      t.equal(await chat.locator('.chat-entry.bot', { hasText: reply }).count(), 0, 'the reply is not a message of the conversation yet')
      await captureEditor(t, opened, 'ai-stream-writing', look)

      // The turn lands: the same text, once, as a message of the conversation.
      await writing.waitFor({ state: 'detached', timeout: 15_000 })
      const replies = chat.locator('.chat-entry.bot', { hasText: reply })
      await replies.first().waitFor()
      t.equal(await replies.count(), 1, 'exactly one bubble holds the reply')
      t.equal((await replies.locator('.chat-text').innerText()).trim(), reply, 'the whole reply')
      await chat.locator('.chat-entry.bot', { hasText: QUESTION[lang] }).nth(1).waitFor()
      t.same(
        (await chat.locator('.chat-entry .chat-text').allInnerTexts()).map((line) => line.trim()),
        [QUESTION[lang], ASKED[lang], reply, QUESTION[lang]],
        'the conversation in order: the question, the person, the reply, the question again',
      )
      t.equal(model.requests.length, asked + 1, 'the model was asked once')
      t.match(model.requests.at(-1)!.body, { stream: true }, 'for a streamed answer')
      await captureEditor(t, opened, 'ai-stream-replied', look)

      // The debug view: the prompt by role, and the answer with its tokens.
      await panel.getByTestId('test-tab-debug').click()
      const aiCall = panel.getByTestId('test-call').filter({ has: editor.getByTestId('ai-exchange') })
      await aiCall.waitFor()
      t.equal(await aiCall.count(), 1, 'the reply made one call')
      const words = ROLES[lang]
      await aiCall.getByTestId('ai-prompt').locator('summary').click()
      const prompt = (await aiCall.getByTestId('ai-prompt').innerText()).replace(/\s+/g, ' ')
      t.match(
        prompt,
        `${words.system} ${INSTRUCTIONS} Answer from this knowledge only: ${KNOWLEDGE} ${words.assistant} ${QUESTION[lang]} ${words.user} ${ASKED[lang]}`,
        'the prompt, message by message with its role',
      )
      t.equal(await aiCall.getByTestId('ai-answer').innerText(), reply, "the answer's text, put together from the streamed chunks")
      const tokens = words.tokens.exec(await aiCall.getByTestId('test-call-tokens').innerText())
      const sent = model.requests.at(-1)!.body.messages!.reduce((sum, message) => sum + wordCount(message.content), 0)
      t.same(tokens && [Number(tokens[1]), Number(tokens[2])], [sent, wordCount(reply)], 'the tokens the endpoint counted, from the last chunk')
      t.match(await aiCall.locator('.call-line').innerText(), `POST ${model.baseUrl}/chat/completions`, 'with the raw call below')
      t.notMatch(await aiCall.innerText(), MODEL_KEY, 'never the key')
      await aiCall.getByTestId('ai-answer').scrollIntoViewIfNeeded()
      await checkEditorLayout(t, frame, `the debug view of an AI reply, ${lang} ${look.theme}`)
      await captureEditor(t, opened, 'ai-stream-debug', look)

      if (look !== LOOKS[0]) return
      // A reply cut at the token limit leaves by error: the text being written goes, and the turn's own message comes.
      await panel.getByTestId('test-tab-chat').click()
      const cut = 'This answer will never be finished because'
      model.answerWith(() => ({ content: cut, finishReason: 'length' }))
      await panel.getByTestId('test-reply').fill('Tell me everything')
      await panel.getByTestId('test-reply').press('Enter')
      await writing.locator('.chat-text').waitFor()
      await chat.getByText('Our assistant is away.').waitFor()
      t.equal(await writing.count(), 0, 'the reply being written is gone')
      t.equal(await chat.getByText(cut, { exact: false }).count(), 0, 'and nothing of it stays in the conversation')
      await panel.getByTestId('test-ended').waitFor()
    })
  }
})
