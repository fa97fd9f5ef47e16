import t from 'tap'
import { folderCycles, sourceGraph } from '../helpers/folder-cycles.js'

/**
 * Each app of web/src is laid out as src/ is: `editor/flow/model.ts` belongs to `editor/flow`,
 * `dashboard/screens/flows/FlowPage.tsx` to `dashboard/screens`, and a file directly under an app's
 * folder (`editor/i18n.tsx`) or under web/src/shared is a unit of its own.
 */
const unitOf = (file: string): string => file.replace(/^web\/src\//, '').split('/').slice(0, 2).join('/')

t.test('no cycles between the folders of web/src/', async (t) => {
  const graph = await sourceGraph('web/src', ['.ts', '.tsx', '.css'])
  t.strictSame(graph.unresolved, [], 'every relative import resolves, so none is missing from the graph')
  t.ok(graph.files > 100, `the graph holds the source (${graph.files} files)`)
  t.ok(graph.imports.some(({ from, to }) => unitOf(from).startsWith('editor/') && unitOf(to).startsWith('editor/') && unitOf(from) !== unitOf(to)), "imports between the editor's folders are in the graph")
  t.ok(graph.imports.some(({ from, to }) => unitOf(from).startsWith('dashboard/') && unitOf(to).startsWith('dashboard/') && unitOf(from) !== unitOf(to)), "imports between the dashboard's folders are in the graph")
  t.ok(graph.hasTypeOnly, 'type-only imports are in the graph')
  t.strictSame(folderCycles(graph.imports, unitOf), [], 'no folder of web/src/ reaches itself through another')
})
