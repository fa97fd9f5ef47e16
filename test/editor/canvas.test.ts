import type { Frame } from 'playwright-core'
import t from 'tap'
import { nodeTypes } from '../../src/domain/nodes/index.js'
import { assertionMessage } from '../helpers/assertion-message.js'
import { browserSkipReason, waitForMessage, waitInPage } from '../helpers/browser.js'
import { LOOKS } from '../helpers/dashboard.js'
import { captureEditor, openEditor, openEditorSetup, sampleFlow } from '../helpers/editor.js'

const skip = browserSkipReason()
// Four narrow editors and a keyboard session in one browser: more than the default 300 s on a busy machine.
t.setTimeout(600_000)

/** The nodes and edges the canvas draws, by id. */
const drawn = (frame: Frame) =>
  frame.evaluate(`({
    nodes: [...document.querySelectorAll('.react-flow__node')].map((n) => n.dataset.id),
    edges: document.querySelectorAll('.react-flow__edge').length,
  })`) as Promise<{ nodes: string[]; edges: number }>

/**
 * A message key shown in place of its string (`type.wait`, `q.prompt`, `[media.image] …`): the
 * translator gives the key back when neither language has it.
 */
const MESSAGE_KEY = /(?:^|[\s[(])[a-z]+(?:\.[a-z][A-Za-z_]*)+(?=$|[\s\]):,])/

/** The words an element shows: each of its texts, and the placeholders, labels and titles in it. */
const wordsIn = (frame: Frame, selector: string) =>
  frame.evaluate(`(() => {
    const root = document.querySelector(${JSON.stringify(selector)})
    const words = []
    const texts = document.createTreeWalker(root, NodeFilter.SHOW_TEXT)
    for (let text = texts.nextNode(); text; text = texts.nextNode()) words.push(text.data.trim())
    for (const element of root.querySelectorAll('[placeholder], [aria-label], [title]')) {
      for (const name of ['placeholder', 'aria-label', 'title']) words.push(element.getAttribute(name) ?? '')
    }
    return words.filter(Boolean)
  })()`) as Promise<string[]>

const focusedElement = (frame: Frame) => frame.evaluate('document.activeElement && (document.activeElement.id || document.activeElement.className)') as Promise<string>

t.test('the editor canvas in a real browser', { skip }, async (t) => {
  const setup = await openEditorSetup(t)

  t.test('a flow built and connected with the keyboard alone is saved as built', async (t) => {
    const flowId = await setup.createFlow('Keyboard')
    const opened = await openEditor(t, setup, flowId)
    const { page, editor, frame } = opened
    const keys = page.keyboard

    // The first Tab stop skips the palette, nodes and edges for the side panel.
    await frame.evaluate('window.focus()')
    await keys.press('Tab')
    t.match(await focusedElement(frame), /skip-link/, 'the first Tab stop is the skip link')
    await keys.press('Enter')
    await waitInPage(frame, "document.activeElement && document.activeElement.id === 'side-panel'")
    t.pass('Enter on it puts the focus in the side panel')

    // The palette by keyboard: the new node is selected and its form is in the side panel.
    await editor.getByTestId('palette-message').focus()
    await keys.press('Enter')
    const added = editor.locator('[data-node-type="message"]')
    await added.waitFor()
    const messageId = (await added.getAttribute('data-testid'))!.replace(/^node-/, '')
    const panel = editor.getByTestId('node-panel')
    await panel.getByRole('textbox', { name: 'Text', exact: true }).focus()
    await keys.type('Hello, keyboard')
    // Select-all and copy in a text field are the field's own: the canvas keeps its nodes.
    await keys.press('Control+a')
    await keys.press('Control+c')
    await keys.press('Control+v')
    t.equal(await panel.getByRole('textbox', { name: 'Text', exact: true }).inputValue(), 'Hello, keyboard', 'the field pasted its own text over its own selection')
    t.same((await drawn(frame)).nodes.sort(), ['end', messageId, 'start'].sort(), 'and no node was copied or pasted')

    // Its exit leads to the end: chosen in its Next node select by typing.
    const next = editor.getByTestId('next-nodes').getByRole('combobox', { name: 'Next node', exact: true })
    await next.focus()
    await keys.type('End')
    t.equal(await next.inputValue(), 'end', "the message's Next node is the end")

    // The start, selected with Enter from the keyboard, leads to the message instead of the end.
    const start = editor.locator('.react-flow__node[data-id="start"]')
    await start.focus()
    await keys.press('Enter')
    await panel.getByText('start', { exact: true }).waitFor()
    const startNext = editor.getByTestId('next-nodes').getByRole('combobox', { name: 'Next node', exact: true })
    t.equal(await startNext.inputValue(), 'end', "the start's select shows its current target")
    await startNext.focus()
    await keys.type('Message')
    t.equal(await startNext.inputValue(), messageId, 'and now names the message')

    // A node focused by the keyboard shows a ring.
    const messageNode = editor.locator(`.react-flow__node[data-id="${messageId}"]`)
    await messageNode.focus()
    await keys.press('Enter')
    const ring = await frame.evaluate(`(() => {
      const node = document.activeElement.querySelector('.flow-node')
      return document.activeElement.dataset.id + ' ' + getComputedStyle(node).outlineStyle + ' ' + getComputedStyle(node).outlineWidth
    })()`)
    t.equal(ring, `${messageId} solid 3px`, 'the node focused by the keyboard has a visible focus ring')
    await captureEditor(t, opened, 'keyboard-connected', { lang: 'en', theme: 'light' })

    await keys.press('Control+s')
    await waitForMessage(page, 'saved')
    const saved = await setup.draft(flowId)
    t.same(
      saved.edges.map((e) => `${e.source}->${e.target}`).sort(),
      [`${messageId}->end`, `start->${messageId}`].sort(),
      'the saved draft leads start → message → end',
    )
    t.same(saved.nodes.find((n) => n.id === messageId)?.data, { messages: [{ type: 'text', text: { body: 'Hello, keyboard' } }] }, 'with the text typed')

    // Copy and paste, duplicate, select-all: new ids, the edges among the copies kept, in view.
    await messageNode.focus()
    await keys.press('Control+c')
    await keys.press('Control+v')
    await waitInPage(frame, 'document.querySelectorAll(\'[data-node-type="message"]\').length === 2')
    await keys.press('Control+d')
    await waitInPage(frame, 'document.querySelectorAll(\'[data-node-type="message"]\').length === 3')
    const copies = (await drawn(frame)).nodes.filter((id) => id.startsWith('message_') && id !== messageId)
    t.equal(new Set(copies).size, 2, 'a paste and a duplicate add two messages with new ids')
    const before = await drawn(frame)
    await keys.press('Control+a')
    await keys.press('Control+c')
    await keys.press('Control+v')
    await waitInPage(frame, `document.querySelectorAll('.react-flow__node').length === ${before.nodes.length * 2 - 1}`)
    // An edge is drawn once both its nodes are measured, a frame or more after the nodes.
    await waitInPage(frame, `document.querySelectorAll('.react-flow__edge').length === ${before.edges * 2 - 1}`)
    const after = await drawn(frame)
    t.equal(after.edges, before.edges * 2 - 1, 'the copied edges among copied nodes come along; the start is never copied, nor its edge')
    t.equal(new Set(after.nodes).size, after.nodes.length, 'every node id is distinct')
    const inView = await frame.evaluate(`(() => {
      const canvas = document.querySelector('.react-flow').getBoundingClientRect()
      return [...document.querySelectorAll('.react-flow__node.selected')].every((n) => {
        const box = n.getBoundingClientRect()
        return box.right > canvas.left && box.left < canvas.right && box.bottom > canvas.top && box.top < canvas.bottom
      })
    })()`)
    t.ok(inView, 'the pasted nodes are in view')
    for (let i = 0; i < 3; i++) await keys.press('Control+z')
    await waitInPage(frame, `document.querySelectorAll('.react-flow__node').length === 3`)
    t.match(await editor.getByTestId('save-state').textContent(), /All changes saved/, 'undo takes the pastes away again')
  })

  t.test("every node type's name, palette description, body and form are in words, in English and in Portuguese", async (t) => {
    const flowId = await sampleFlow(setup, 'Every type')
    for (const lang of ['en', 'pt'] as const) {
      const opened = await openEditor(t, setup, flowId, { lang })
      const { page, editor, frame } = opened
      const keysShown = async (selector: string) => (await wordsIn(frame, selector)).filter((word) => MESSAGE_KEY.test(word)).map((word) => assertionMessage(word))
      t.same(await keysShown('.palette'), [], `${lang}: the palette names and describes every type`)

      const start = editor.locator('.react-flow__node[data-id="start"]')
      await start.focus()
      await page.keyboard.press('Enter')
      await editor.getByTestId('node-panel').locator('h2.type-start').waitFor()
      const shown = ['start']
      t.same(await keysShown('[data-testid="node-start"]'), [], `${lang}: the start node's body`)
      t.same(await keysShown('[data-testid="node-panel"]'), [], `${lang}: the start node's form`)

      const paletteTypes = (await editor.locator('.palette-item').evaluateAll((items) => items.map((item) => item.getAttribute('data-testid')))).map((id) => id!.replace(/^palette-/, ''))
      for (const type of paletteTypes) {
        const before = await editor.locator(`[data-node-type="${type}"]`).count()
        await editor.getByTestId(`palette-${type}`).focus()
        await page.keyboard.press('Enter')
        await editor.locator(`[data-node-type="${type}"]`).nth(before).waitFor()
        await editor.getByTestId('node-panel').locator(`h2.type-${type}`).waitFor()
        const id = await editor.locator(`[data-node-type="${type}"]`).nth(before).getAttribute('data-testid')
        t.same(await keysShown(`[data-testid="${id}"]`), [], `${lang}: the ${type} node's body`)
        t.same(await keysShown('[data-testid="node-panel"]'), [], `${lang}: the ${type} node's form`)
        shown.push(type)
      }
      t.same(shown.sort(), Object.keys(nodeTypes).sort(), `${lang}: every type of the service's registry was shown`)
      await captureEditor(t, opened, 'every-node-type', { lang, theme: 'light' }, { axe: false })
      await page.close()
    }
  })

  t.test('nodes added from the palette land apart, inside the visible canvas', async (t) => {
    const flowId = await sampleFlow(setup, 'Crowded')
    const { page, editor, frame } = await openEditor(t, setup, flowId, { width: 800 })
    const before = (await drawn(frame)).nodes
    for (const type of ['message', 'question', 'condition', 'setVariable', 'message', 'end']) {
      await editor.getByTestId(`palette-${type}`).focus()
      await page.keyboard.press('Enter')
    }
    await waitInPage(frame, `document.querySelectorAll('.react-flow__node').length === ${before.length + 6}`)
    const placed = (await frame.evaluate(`(() => {
      const canvas = document.querySelector('.react-flow').getBoundingClientRect()
      const known = ${JSON.stringify(before)}
      return [...document.querySelectorAll('.react-flow__node')].filter((n) => !known.includes(n.dataset.id)).map((n) => {
        const box = n.getBoundingClientRect()
        return { inside: box.left >= canvas.left && box.right <= canvas.right && box.top >= canvas.top && box.bottom <= canvas.bottom, left: box.left, right: box.right, top: box.top, bottom: box.bottom }
      })
    })()`)) as { inside: boolean; left: number; right: number; top: number; bottom: number }[]
    t.same(placed.map((p) => p.inside), placed.map(() => true), 'every new node is wholly inside the visible canvas')
    const overlapping = placed.some((a, i) => placed.some((b, j) => i < j && a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom))
    t.notOk(overlapping, 'and none covers another')
  })

  t.test('in an 800 px iframe the flow stays readable, the minimap fits and the side panel folds away', async (t) => {
    const flowId = await sampleFlow(setup, 'Narrow')
    for (const look of LOOKS) {
      const opened = await openEditor(t, setup, flowId, { ...look, width: 800 })
      const { editor, frame, page } = opened
      await waitInPage(frame, "getComputedStyle(document.querySelector('.react-flow__viewport')).transform !== 'none'")
      const zoom = Number(await frame.evaluate("new DOMMatrix(getComputedStyle(document.querySelector('.react-flow__viewport')).transform).a"))
      t.ok(zoom >= 0.6, `${look.lang} ${look.theme}: fit view keeps text readable (zoom ${zoom})`)
      const fits = await frame.evaluate(`(() => {
        const canvas = document.querySelector('.canvas').getBoundingClientRect()
        const map = document.querySelector('.react-flow__minimap').getBoundingClientRect()
        return map.left >= canvas.left && map.right <= canvas.right && map.top >= canvas.top && map.bottom <= canvas.bottom && map.width <= canvas.width / 2
      })()`)
      t.ok(fits, `${look.lang} ${look.theme}: the minimap fits in the canvas`)
      const brokenNames = await frame.evaluate(`[...document.querySelectorAll('.palette-item strong')].filter((name) => name.getBoundingClientRect().right > name.closest('.palette-item').getBoundingClientRect().right || getComputedStyle(name).overflowWrap !== 'normal').length`)
      t.equal(brokenNames, 0, `${look.lang} ${look.theme}: every palette name fits its item with its words whole`)
      const hiddenTabs = await frame.evaluate(`(() => {
        const panel = document.querySelector('.side-panel').getBoundingClientRect()
        return [...document.querySelectorAll('.side-panel [role=tab]')].filter((tab) => tab.getBoundingClientRect().right > panel.right).length
      })()`)
      t.equal(hiddenTabs, 0, `${look.lang} ${look.theme}: every tab of the side panel is in sight`)
      await captureEditor(t, opened, 'narrow', look)

      const width = () => frame.evaluate("document.querySelector('.canvas').getBoundingClientRect().width") as Promise<number>
      const open = await width()
      await editor.getByTestId('panel-toggle').focus()
      await page.keyboard.press('Enter')
      await editor.getByTestId('tab-variables').waitFor({ state: 'hidden' })
      t.ok((await width()) > open + 200, `${look.lang} ${look.theme}: folding the side panel gives the canvas its room`)
      t.equal(await editor.getByTestId('panel-toggle').getAttribute('aria-expanded'), 'false')
      await captureEditor(t, opened, 'narrow-folded', look, { axe: false })
      await page.keyboard.press('Enter')
      await editor.getByTestId('tab-variables').waitFor()
      await page.close()
    }
  })
})
