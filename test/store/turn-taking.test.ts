import { createServer, connect } from 'node:net'
import { sql } from 'kysely'
import t from 'tap'
import { pgliteBackend } from '../helpers/storage.js'

t.test('on PGlite, queries queued for its one connection leave the event loop its network I/O', async (t) => {
  const storage = await pgliteBackend.open(t)
  const server = createServer((socket) => socket.on('data', (data) => socket.end(data)))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  const { port } = server.address() as { port: number }
  const client = connect(port, '127.0.0.1')
  await new Promise<void>((resolve) => client.once('connect', resolve))

  const QUERIES = 300
  let done = 0
  const queries = Array.from({ length: QUERIES }, () => sql`select count(*) from generate_series(1, 200)`.execute(storage.db).then(() => done++))
  // A round trip over a socket, started while every query waits its turn.
  const echoed = new Promise<number>((resolve) => client.once('data', () => resolve(done)))
  client.write('ping')
  await Promise.all(queries)
  const doneWhenEchoed = await echoed
  client.destroy()
  t.ok(doneWhenEchoed < QUERIES / 2, `the echo came back while queries were still queued (after ${doneWhenEchoed} of ${QUERIES})`)
})
