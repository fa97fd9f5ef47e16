import t from 'tap'
import { GeneratedText, type TextPiece } from '../../src/engine/generated-text.js'
import { reachableBackends } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'

// The text of AI replies on its way to the session streams: in the process that reads it, and on
// Postgres to the other processes that listen, in order, for the sessions they follow only.

const piece = (sessionId: string, text: string): TextPiece => ({ sessionId, messageId: 'm1', nodeId: 'answer', text })

for (const backend of reachableBackends) {
  t.test(`generated text on ${backend.name}`, async (t) => {
    const storage = await backend.open(t)
    const engine = new GeneratedText(storage.pool)
    t.teardown(() => engine.close())

    await t.test('the process reading it hands each piece to the listeners of its session', async (t) => {
      const got: string[] = []
      const stop = await engine.listen('s1', (p) => void got.push(p.text))
      engine.publish(piece('s1', 'Hel'))
      engine.publish(piece('s2', 'other'))
      engine.publish(piece('s1', 'lo'))
      t.same(got, ['Hel', 'lo'], 'at once, in order, its own session only')
      stop()
      engine.publish(piece('s1', '!'))
      t.same(got, ['Hel', 'lo'], 'nothing once it stopped listening')
    })

    if (!storage.pool) return
    await t.test('another process gets the pieces of the sessions it follows, joined and in order', async (t) => {
      const api = new GeneratedText(storage.pool)
      t.teardown(() => api.close())
      const got: TextPiece[] = []
      await api.listen('s1', (p) => void got.push(p))
      const words = Array.from({ length: 50 }, (_, i) => `w${i} `)
      await eventually('the engine to see a process listening', async () => {
        engine.publish(piece('s1', '.'))
        await new Promise((resolve) => setTimeout(resolve, 150))
        return got.length > 0 ? true : undefined
      })
      got.length = 0
      for (const word of words) engine.publish(piece('s1', word))
      engine.publish(piece('s9', 'not followed'))
      engine.publish(piece('s1', 'x'.repeat(5000)))
      const expected = words.join('') + 'x'.repeat(5000)
      await eventually('every piece to arrive', async () => (got.map((p) => p.text).join('') === expected ? true : undefined))
      t.ok(got.length < words.length, `joined into fewer notifications (${got.length})`)
      t.ok(got.every((p) => p.sessionId === 's1' && p.nodeId === 'answer' && p.messageId === 'm1'))
    })
  })
}
