import type { Frame } from 'playwright-core'
import t from 'tap'
import { browserSkipReason } from '../helpers/browser.js'
import { LOOKS } from '../helpers/dashboard.js'
import { captureEditor, checkEditorLayout, openEditor, openEditorSetup, sampleFlow } from '../helpers/editor.js'

const skip = browserSkipReason()
// Four looks, each with its own editor and four axe runs: more than the default 300 s on a busy machine.
t.setTimeout(600_000)

/** WCAG's contrast ratio of two `rgb(…)` colours (alpha ignored). */
function contrast(a: string, b: string): number {
  const luminance = (color: string) => {
    const [r, g, b] = (color.match(/[\d.]+/g) ?? []).slice(0, 3).map((v) => Number(v) / 255).map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4))
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!
  }
  const [high, low] = [luminance(a), luminance(b)].sort((x, y) => y - x)
  return (high! + 0.05) / (low! + 0.05)
}

/** The canvas's background and the colours drawn on it that must stand out from it. */
const canvasColours = (frame: Frame) =>
  frame.evaluate(`(() => {
    const style = (selector) => getComputedStyle(document.querySelector(selector))
    return {
      canvas: style('.react-flow').backgroundColor,
      edge: style('.react-flow__edge-path').stroke,
      nodeBorder: style('.flow-node').borderLeftColor,
      controls: style('.react-flow__controls').borderTopColor,
      minimap: style('.react-flow__minimap').borderTopColor,
    }
  })()`) as Promise<Record<'canvas' | 'edge' | 'nodeBorder' | 'controls' | 'minimap', string>>


t.test('the editor in a real browser, checked with axe-core', { skip }, async (t) => {
  const setup = await openEditorSetup(t)

  t.test('every look passes axe with nothing selected, a node selected, and the variables and problems tabs', async (t) => {
    const flowId = await sampleFlow(setup, 'Plans')
    for (const look of LOOKS) {
      const opened = await openEditor(t, setup, flowId, look)
      const { editor } = opened
      await captureEditor(t, opened, 'canvas', look)
      const colours = await canvasColours(opened.frame)
      for (const part of ['edge', 'nodeBorder', 'controls', 'minimap'] as const) {
        t.ok(contrast(colours[part], colours.canvas) >= 3, `${look.lang} ${look.theme}: ${part} ${colours[part]} stands 3:1 against the canvas ${colours.canvas}`)
      }
      // A disabled button is grey, not a dimmed accent: Save draft (nothing to save) against Publish (a draft to publish).
      const buttons = (await opened.frame.evaluate(`(() => {
        const look = (id) => { const b = document.querySelector('[data-testid=' + id + ']'); return { disabled: b.disabled, background: getComputedStyle(b).backgroundColor } }
        return { save: look('save'), publish: look('publish'), surface: getComputedStyle(document.querySelector('.palette-item')).backgroundColor }
      })()`)) as Record<'save' | 'publish', { disabled: boolean; background: string }> & { surface: string }
      t.same([buttons.save.disabled, buttons.publish.disabled], [true, false], `${look.lang} ${look.theme}: nothing to save, a draft to publish`)
      t.equal(buttons.save.background, buttons.surface, `${look.lang} ${look.theme}: the disabled Save draft is grey like the palette's items`)
      t.not(buttons.publish.background, buttons.surface, `${look.lang} ${look.theme}: the enabled Publish is not`)
      await editor.getByTestId('node-plan').click()
      await editor.getByTestId('node-panel').waitFor()
      await captureEditor(t, opened, 'node-selected', look)
      await editor.getByTestId('tab-variables').click()
      await editor.getByTestId('variables-panel').waitFor()
      await captureEditor(t, opened, 'variables', look)
      // An empty message nothing reaches makes the check find two problems: the panel, the node,
      // the status and the unsaved-changes badge all show theirs.
      await editor.getByTestId('palette-message').click()
      await editor.getByRole('button', { name: look.lang === 'pt' ? /Verificar/ : /Check/ }).click()
      await editor.getByTestId('problems-panel').locator('li').nth(1).waitFor()
      t.match(await editor.getByTestId('status').textContent(), look.lang === 'pt' ? /tem 2 problemas;/ : /has 2 problems;/, `${look.lang} ${look.theme}: the count in words, plural and all`)
      const entries = (await opened.frame.evaluate(`[...document.querySelectorAll('[data-testid=problems-panel] li')].map((li) => {
        const line = parseFloat(getComputedStyle(li).lineHeight) || 20
        return { lines: Math.round(li.getBoundingClientRect().height / line), fits: li.scrollWidth <= li.clientWidth + 1 }
      })`)) as { lines: number; fits: boolean }[]
      t.same(entries.map((e) => e.fits), [true, true], `${look.lang} ${look.theme}: each problem fits the panel's width`)
      t.ok(entries.some((e) => e.lines > 1), `${look.lang} ${look.theme}: a long one wraps onto more lines`)
      await checkEditorLayout(t, opened.frame, `problems ${look.lang} ${look.theme}`)
      await captureEditor(t, opened, 'problems', look)
      await opened.page.setViewportSize({ width: 1280, height: 900 })
      await checkEditorLayout(t, opened.frame, `problems at 1280 px, ${look.lang} ${look.theme}`)
      await captureEditor(t, opened, 'problems-1280', look, { axe: false })
    }
  })
})
