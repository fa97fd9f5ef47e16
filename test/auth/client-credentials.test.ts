import { randomUUID } from 'node:crypto'
import t from 'tap'
import type * as ClientCredentials from '../../src/auth/client-credentials.js'
import { hashClientSecret } from '../../src/commands/oauth-clients.js'

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`

t.test('an unknown client id costs a full secret check, against a decoy hash', async (t) => {
  const real = await hashClientSecret('whcs_right')
  const client = { clientId: randomUUID(), organizationId: randomUUID(), workspaceId: randomUUID(), secretHash: real }
  const checked: string[] = []
  const { authenticateClient } = await t.mockImport<typeof ClientCredentials>('../../src/auth/client-credentials.js', {
    '../../src/projections/oauth-clients.js': {
      findOAuthClientCredentials: async (_db: unknown, id: string) => (id === client.clientId ? client : undefined),
    },
    '../../src/commands/oauth-clients.js': {
      hashClientSecret,
      verifyClientSecret: async (secret: string, stored: string) => {
        checked.push(stored)
        return secret === 'whcs_right' && stored === real
      },
    },
  })
  const db = {} as never

  t.same(await authenticateClient(db, basic(client.clientId, 'whcs_right')), { clientId: client.clientId, organizationId: client.organizationId, workspaceId: client.workspaceId })
  t.equal(await authenticateClient(db, basic(client.clientId, 'whcs_wrong')), undefined)
  t.same(checked, [real, real])

  checked.length = 0
  t.equal(await authenticateClient(db, basic(randomUUID(), 'whcs_right')), undefined, 'unknown id')
  t.equal(await authenticateClient(db, basic('not-a-uuid', 'whcs_right')), undefined, 'an id that cannot exist')
  t.equal(checked.length, 2, 'each still ran a check')
  t.ok(checked.every((stored) => stored !== real && stored.startsWith('scrypt$32768$8$1$')), 'against a decoy of the same cost')
})
