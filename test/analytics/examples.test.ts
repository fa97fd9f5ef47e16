import t from 'tap'
import { reachableBackends } from '../helpers/storage.js'
import { buildDataSet } from './data-set.js'
import { EXPECTED, documentedQueries, rowsOf } from './examples.js'

t.test('docs/analytics.md holds eleven example queries', async (t) => {
  t.equal(documentedQueries().length, 11)
  t.equal(EXPECTED.length, 11)
})

for (const backend of reachableBackends) {
  t.test(`every example of docs/analytics.md answers as expected (${backend.name})`, async (t) => {
    const { test } = await buildDataSet(t, backend)
    for (const [i, query] of documentedQueries().entries()) {
      t.same(await rowsOf(test.storage.db, query), EXPECTED[i], `example ${i + 1}`)
    }
  })
}
