import type { Frame } from 'playwright-core'
import t from 'tap'
import { nodeTypes } from '../../src/domain/nodes/index.js'
import { assertionMessage } from '../helpers/assertion-message.js'
import { browserSkipReason, waitForMessage, waitInPage } from '../helpers/browser.js'
import { LOOKS } from '../helpers/dashboard.js'
import { TANGLED_FLOW } from '../fixtures/tangled-flow.js'
import { captureEditor, checkEditorLayout, editorLayout, openEditor, openEditorSetup, sampleFlow } from '../helpers/editor.js'

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

interface Rect {
  left: number
  right: number
  top: number
  bottom: number
}

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
      const exitWords = await editor.locator('[data-node-type="question"]').last().locator('.exit-row span').allTextContents()
      t.same(exitWords, lang === 'pt' ? ['padrão', 'inválida'] : ['default', 'invalid'], `${lang}: a question's exits are words of the language`)
      const conditionExit = await editor.locator('[data-node-type="condition"]').last().locator('.exit-row.default span').textContent()
      t.equal(conditionExit, lang === 'pt' ? 'padrão' : 'default', `${lang}: so is a condition's default exit`)
      const planExits = await editor.getByTestId('node-plan').locator('.exit-row span').allTextContents()
      t.same(planExits, ['Basic', 'Pro', lang === 'pt' ? 'inválida' : 'invalid'], `${lang}: a choice's exits are its buttons' titles and the invalid exit`)
      await captureEditor(t, opened, 'every-node-type', { lang, theme: 'light' }, { axe: false })
    }
  })

  t.test('nodes added from the palette land apart in the visible canvas, clear of the minimap, or beside the selected node', async (t) => {
    const flowId = await sampleFlow(setup, 'Crowded')
    const { page, editor, frame } = await openEditor(t, setup, flowId, { width: 1280 })
    const before = (await drawn(frame)).nodes
    const boxes = () =>
      frame.evaluate(`(() => {
        const box = (element) => { const b = element.getBoundingClientRect(); return { left: b.left, right: b.right, top: b.top, bottom: b.bottom } }
        return {
          canvas: box(document.querySelector('.react-flow')),
          covered: [...document.querySelectorAll('.react-flow__minimap, .react-flow__controls')].map(box),
          nodes: Object.fromEntries([...document.querySelectorAll('.react-flow__node')].map((n) => [n.dataset.id, box(n)])),
        }
      })()`) as Promise<{ canvas: Rect; covered: Rect[]; nodes: Record<string, Rect> }>
    const meets = (a: Rect, b: Rect) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom
    const inside = (a: Rect, b: Rect) => a.left >= b.left && a.right <= b.right && a.top >= b.top && a.bottom <= b.bottom

    // Nothing selected: each lands in free room of the view (a click on the bare canvas unselects the last one added).
    for (const type of ['message', 'question', 'condition', 'setVariable', 'end']) {
      await editor.locator('.react-flow__pane').click({ position: { x: 8, y: 8 } })
      await editor.getByTestId(`palette-${type}`).focus()
      await page.keyboard.press('Enter')
    }
    await waitInPage(frame, `document.querySelectorAll('.react-flow__node').length === ${before.length + 5}`)
    let seen = await boxes()
    const added = Object.entries(seen.nodes).filter(([id]) => !before.includes(id))
    t.equal(seen.covered.length, 2, 'the canvas shows its minimap and its zoom controls')
    t.same(added.filter(([, box]) => !inside(box, seen.canvas)).map(([id]) => id), [], 'every new node is wholly inside the visible canvas')
    t.same(added.filter(([, box]) => seen.covered.some((c) => meets(box, c))).map(([id]) => id), [], 'none under the minimap or the zoom controls')
    const overlapping = added.filter(([id, box]) => Object.entries(seen.nodes).some(([other, b]) => other !== id && meets(box, b)))
    t.same(overlapping.map(([id]) => id), [], 'and none covers another node')

    // One selected: the new node lands right of it, brought into view if need be.
    await editor.getByTestId('node-pro').click()
    await editor.getByTestId('palette-message').click()
    await waitInPage(frame, `document.querySelectorAll('.react-flow__node').length === ${before.length + 6}`)
    await page.waitForTimeout(300)
    seen = await boxes()
    const [id, box] = Object.entries(seen.nodes).find(([id]) => !before.includes(id) && !added.some(([a]) => a === id))!
    const pro = seen.nodes['pro']!
    t.ok(box.left > pro.right && box.left - pro.right < 60, `the node added with the end "pro" selected (${id}) lands right of it`)
    t.ok(box.top < pro.bottom + 200 && box.bottom > pro.top - 200, 'near its row')
    t.ok(inside(box, seen.canvas) && !seen.covered.some((c) => meets(box, c)), 'in view and not under the minimap or the controls')
    t.same((await editorLayout(frame)).hiddenHandles, [], "no node's entry or exit is under the minimap or the controls")
  })

  t.test('Arrange lays a tangled flow of twelve nodes out: no node over another, no edge behind one, one step of undo', async (t) => {
    const flowId = await sampleFlow(setup, 'Tangled', TANGLED_FLOW)
    for (const look of LOOKS) {
      const opened = await openEditor(t, setup, flowId, look)
      const { page, editor, frame } = opened
      const name = `${look.lang} ${look.theme}`
      const positions = () => frame.evaluate(`Object.fromEntries([...document.querySelectorAll('.react-flow__node')].map((n) => [n.dataset.id, n.style.transform]))`) as Promise<Record<string, string>>
      const tangled = await positions()

      // Arrange is a toolbar button the keyboard reaches.
      await editor.getByTestId('arrange').focus()
      await page.keyboard.press('Enter')
      await waitInPage(frame, `document.querySelector('.react-flow__node[data-id="start"]').style.transform !== ${JSON.stringify(tangled['start'])}`)
      await page.waitForTimeout(400)
      const found = (await frame.evaluate(`(() => {
        const nodes = [...document.querySelectorAll('.react-flow__node')].map((n) => ({ id: n.dataset.id, box: n.getBoundingClientRect() }))
        const meets = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom
        const overlapping = nodes.flatMap((a, i) => nodes.slice(i + 1).filter((b) => meets(a.box, b.box)).map((b) => a.id + ' and ' + b.id))
        // Each edge's drawn line, point by point on the screen, against every node's box less its border.
        const through = []
        for (const edge of document.querySelectorAll('.react-flow__edge')) {
          const path = edge.querySelector('.react-flow__edge-path')
          const toScreen = path.getScreenCTM()
          for (let at = 0; at <= path.getTotalLength(); at += 3) {
            const p = new DOMPoint(path.getPointAtLength(at).x, path.getPointAtLength(at).y).matrixTransform(toScreen)
            for (const node of nodes) {
              const b = node.box
              if (p.x > b.left + 3 && p.x < b.right - 3 && p.y > b.top + 3 && p.y < b.bottom - 3) through.push(edge.getAttribute('aria-label') + ' through ' + node.id)
            }
          }
        }
        return { nodes: nodes.length, edges: document.querySelectorAll('.react-flow__edge').length, overlapping, through: [...new Set(through)] }
      })()`)) as { nodes: number; edges: number; overlapping: string[]; through: string[] }
      t.same([found.nodes, found.edges], [12, 16], `${name}: every node and edge is drawn`)
      t.same(found.overlapping, [], `${name}: no two nodes overlap`)
      t.same(found.through, [], `${name}: no edge passes behind a node`)
      t.match(await editor.getByTestId('save-state').textContent(), look.lang === 'pt' ? /Alterações não salvas/ : /Unsaved changes/, `${name}: the arranged flow is a change to save`)
      await checkEditorLayout(t, frame, `arranged ${name}`)
      await captureEditor(t, opened, 'arranged-1440', look)
      await page.setViewportSize({ width: 1280, height: 900 })
      await editor.locator('.toolbar').getByRole('button', { name: look.lang === 'pt' ? 'Ajustar à tela' : 'Fit view', exact: true }).click()
      await captureEditor(t, opened, 'arranged-1280', look, { axe: false })

      await frame.evaluate('document.activeElement.blur()')
      await page.keyboard.press('Control+z')
      await waitInPage(frame, `document.querySelector('.react-flow__node[data-id="start"]').style.transform === ${JSON.stringify(tangled['start'])}`)
      t.same(await positions(), tangled, `${name}: one undo puts every node back where it was`)
      t.match(await editor.getByTestId('save-state').textContent(), look.lang === 'pt' ? /Todas as alterações salvas/ : /All changes saved/, `${name}: with nothing left to save`)
    }
  })

  t.test('in an 800 px iframe the flow stays readable, the minimap fits and the side panel folds away', async (t) => {
    const flowId = await sampleFlow(setup, 'Narrow')
    for (const look of LOOKS) {
      const opened = await openEditor(t, setup, flowId, { ...look, width: 800 })
      const { editor, frame, page } = opened
      await waitInPage(frame, "getComputedStyle(document.querySelector('.react-flow__viewport')).transform !== 'none'")
      const zoom = Number(await frame.evaluate("new DOMMatrix(getComputedStyle(document.querySelector('.react-flow__viewport')).transform).a"))
      t.ok(zoom >= 0.6, `${look.lang} ${look.theme}: fit view keeps text readable (zoom ${zoom})`)
      const minimap = () =>
        frame.evaluate(`(() => {
          const canvas = document.querySelector('.canvas').getBoundingClientRect()
          const element = document.querySelector('.react-flow__minimap')
          if (!element) return 'none'
          const map = element.getBoundingClientRect()
          return map.left >= canvas.left && map.right <= canvas.right && map.top >= canvas.top && map.bottom <= canvas.bottom && map.width <= canvas.width / 3 ? 'fits' : 'too big'
        })()`)
      t.equal(await minimap(), 'none', `${look.lang} ${look.theme}: a canvas too narrow to spare the room shows no minimap`)
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
      await waitInPage(frame, "document.querySelector('.react-flow__minimap') !== null")
      t.equal(await minimap(), 'fits', `${look.lang} ${look.theme}: and a small minimap that fits in it`)
      t.equal(await editor.getByTestId('panel-toggle').getAttribute('aria-expanded'), 'false')
      await captureEditor(t, opened, 'narrow-folded', look, { axe: false })
      await page.keyboard.press('Enter')
      await editor.getByTestId('tab-variables').waitFor()
    }
  })
})
