import { sql } from 'kysely'
import t from 'tap'
import { prepared } from '../../src/store/prepared.js'
import { postgresBackend, postgresUrl, pgliteBackend } from '../helpers/storage.js'

if (postgresUrl) {
  t.test('a marked query runs as a named statement, parsed once per connection; others as before', async (t) => {
    // One connection, so every query below sees the same session's prepared statements.
    const storage = await postgresBackend.open(t)
    const db = storage.db
    await db.connection().execute(async (connection) => {
      const statements = async () =>
        (await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(connection)).rows
      const marked = (n: number) => sql<{ doubled: number }>`select ${n}::int * 2 as doubled`.compile(connection)
      const before = await statements()
      const answers = []
      for (let n = 1; n <= 7; n++) answers.push((await connection.executeQuery(prepared(marked(n)))).rows[0]!.doubled)
      t.same(answers, [2, 4, 6, 8, 10, 12, 14], 'the answers are the same as unprepared ones')
      const after = await statements()
      const added = after.filter((s) => !before.some((b) => b.name === s.name))
      t.equal(added.length, 1, 'one statement prepared for seven runs of one text')
      t.match(added[0], { name: /^flowd_[0-9a-f]{20}$/, statement: marked(1).sql })
      await sql`select ${1}::int as unmarked`.execute(connection)
      t.equal((await statements()).length, after.length, 'an unmarked query prepares nothing')
    })
  })
}

t.test('PGlite runs a marked query as any other', async (t) => {
  const storage = await pgliteBackend.open(t)
  const { rows } = await storage.db.executeQuery(prepared(sql<{ doubled: number }>`select ${21}::int * 2 as doubled`.compile(storage.db)))
  t.same(rows, [{ doubled: 42 }])
})
