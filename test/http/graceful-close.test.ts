import { once } from 'node:events'
import { Agent, request, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { openTestApp } from '../helpers/app.js'
import { oneBackend } from '../helpers/storage.js'

t.test('a request in flight when the service stops is answered, and its keep-alive connection closed with the answer', async (t) => {
  const { app, admin } = await openTestApp(t, oneBackend)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const agent = new Agent({ keepAlive: true })
  t.teardown(() => agent.destroy())

  const body = JSON.stringify({ name: 'Support' })
  const headersRead = once(app.server, 'request')
  const req = request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/v1/sectors',
    agent,
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-api-key': admin.apiKey },
  })
  const answered = new Promise<IncomingMessage>((resolve, reject) => req.once('response', resolve).once('error', reject))
  // Half the body: the server has the request and waits for the rest while the app starts closing.
  req.write(body.slice(0, 5))
  await headersRead
  const closed = app.close()
  req.end(body.slice(5))

  const response = await answered
  const clientSocket = response.socket
  response.resume()
  await once(response, 'end')
  t.equal(response.statusCode, 201, 'the request begun before the stop is carried out')
  t.equal(response.headers.connection, 'close', 'its answer says the connection ends with it')
  if (!clientSocket.destroyed) await once(clientSocket, 'close')
  t.pass('the server closed the connection rather than keep it alive')
  await closed
})
