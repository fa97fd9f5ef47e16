import t from 'tap'
import type { CatalogFlow, WorkspaceCatalog } from '../../../src/domain/nodes/node-type.js'
import { check, exits, MAX_SUBFLOW_DEPTH, run, schema, type Data } from '../../../src/domain/nodes/run-flow.js'
import { accepts, examples } from '../../helpers/decider-spec.js'
import { checkProblems, emptyCatalog } from '../../helpers/visit.js'

const SELF = '0190a0b0-0000-7000-8000-00000000f000'
const ID = (n: number) => `0190a0b0-0000-7000-8000-00000000f0${String(n).padStart(2, '0')}`

t.test('schema', async (t) => {
  examples(t, accepts(schema), [
    ['a flow, the version published', [{ flowId: ID(1), version: 'published' }], true],
    ['a flow, version 3', [{ flowId: ID(1), version: 3 }], true],
    ['version 0', [{ flowId: ID(1), version: 0 }], false],
    ['a version that is no number', [{ flowId: ID(1), version: 'latest' }], false],
    ['a flow id that is no UUID', [{ flowId: 'support', version: 'published' }], false],
    ['no version', [{ flowId: ID(1) }], false],
  ])
})

t.test('exits: done, once the flow it runs ends', async (t) => {
  t.same(exits(), [{ id: 'done', label: 'done', kind: 'default' }])
})

t.test('run asks the interpreter to enter the flow', async (t) => {
  t.same(run({ id: 'call', type: 'runFlow', position: { x: 0, y: 0 }, data: { flowId: ID(1), version: 2 } }), { enter: { flowId: ID(1), version: 2 } })
})

t.test('check, against the flows of the workspace as published', async (t) => {
  /** Flow n is named Fn, has 2 versions and runs the flows listed. */
  const flows = (runs: Record<number, number[]>): Map<string, CatalogFlow> =>
    new Map(Object.entries(runs).map(([n, calls]) => [ID(Number(n)), { name: `F${n}`, publishedVersion: 2, runs: calls.map(ID) }]))
  const catalog = (runs: Record<number, number[]>, flowId: string | undefined = SELF): WorkspaceCatalog => ({ ...emptyCatalog, flows: flows(runs), ...(flowId !== undefined && { flowId }) })
  const problems = function problems(data: Data, workspace: WorkspaceCatalog) {
    return checkProblems(check, data, workspace)
  }
  const chainOf = (length: number) => Object.fromEntries(Array.from({ length }, (_, i) => [i + 1, i + 1 < length ? [i + 2] : []]))
  examples(t, problems, [
    ['a flow of the workspace', [{ flowId: ID(1), version: 'published' }, catalog({ 1: [] })], []],
    ['its newest version by number', [{ flowId: ID(1), version: 2 }, catalog({ 1: [] })], []],
    ['a version it does not have', [{ flowId: ID(1), version: 3 }, catalog({ 1: [] })], ['version: flow "F1" has no version 3 (its newest is 2)']],
    ['a flow the workspace lacks', [{ flowId: ID(9), version: 'published' }, catalog({ 1: [] })], [`flowId: no flow ${ID(9)} in this workspace`]],
    ['a catalog that knows no flows', [{ flowId: ID(1), version: 'published' }, emptyCatalog], [`flowId: no flow ${ID(1)} in this workspace`]],
    ['the flow itself', [{ flowId: SELF, version: 'published' }, catalog({ 1: [] })], ['flowId: a flow cannot run itself']],
    [
      'a flow that runs this one again, two flows on',
      [{ flowId: ID(1), version: 'published' }, { ...catalog({ 1: [2], 2: [] }), flows: new Map([...flows({ 1: [2] }), [ID(2), { name: 'F2', publishedVersion: 1, runs: [SELF] }], [SELF, { name: 'Main', publishedVersion: 1, runs: [] }]]) }],
      ['flowId: flow "F1" runs this flow again (F1 → F2 → Main): sub-flows cannot run in a circle'],
    ],
    [`a chain ${MAX_SUBFLOW_DEPTH} flows deep`, [{ flowId: ID(1), version: 'published' }, catalog(chainOf(MAX_SUBFLOW_DEPTH))], []],
    [
      `a chain ${MAX_SUBFLOW_DEPTH + 1} flows deep`,
      [{ flowId: ID(1), version: 'published' }, catalog(chainOf(MAX_SUBFLOW_DEPTH + 1))],
      [`flowId: sub-flows nest 6 deep from here (F1 → F2 → F3 → F4 → F5 → F6); at most ${MAX_SUBFLOW_DEPTH}`],
    ],
    ['a circle among other flows ends the search without a report here', [{ flowId: ID(1), version: 'published' }, catalog({ 1: [2], 2: [1] }, undefined)], [
      `flowId: sub-flows nest 7 deep from here (F1 → F2 → F1 → F2 → F1 → F2 → F1); at most ${MAX_SUBFLOW_DEPTH}`,
    ]],
  ])
})
