import t from 'tap'
import { folderCycles, sourceGraph, type FileImport } from '../helpers/folder-cycles.js'

/** `src/domain/nodes/end.ts` belongs to `domain`; a file directly under src/ is a unit of its own. */
const unitOf = (file: string): string => file.replace(/^src\//, '').split('/')[0] ?? file

t.test('the cycle finder names a cycle between folders by the imports that make it', async (t) => {
  const imports: FileImport[] = [
    { from: 'src/orders/place.ts', to: 'src/billing/invoice.ts' },
    { from: 'src/billing/invoice.ts', to: 'src/orders/order.ts' },
    { from: 'src/billing/tax/rates.ts', to: 'src/billing/invoice.ts' },
    { from: 'src/http/app.ts', to: 'src/orders/order.ts' },
    { from: 'src/orders/order.ts', to: 'src/errors.ts' },
  ]
  t.strictSame(folderCycles(imports, unitOf), [
    ['billing → orders → billing', '  src/billing/invoice.ts → src/orders/order.ts', '  src/orders/place.ts → src/billing/invoice.ts'].join('\n'),
  ], 'the shortest way round, then every import between the folders of the cycle')
  t.strictSame(folderCycles(imports.slice(1), unitOf), [], 'one direction alone is no cycle')
})

t.test('no cycles between the folders of src/', async (t) => {
  const graph = await sourceGraph('src', ['.ts'])
  t.strictSame(graph.unresolved, [], 'every relative import resolves, so none is missing from the graph')
  t.ok(graph.files > 100, `the graph holds the source (${graph.files} files)`)
  t.ok(graph.imports.some(({ from, to }) => unitOf(from) !== unitOf(to)), 'imports between folders are in the graph')
  t.ok(graph.hasTypeOnly, 'type-only imports are in the graph')
  t.strictSame(folderCycles(graph.imports, unitOf), [], 'no folder of src/ reaches itself through another')
})
