import { randomBytes, randomUUID } from 'node:crypto'
import t from 'tap'
import { parseBasicAuthorization } from '../../src/auth/client-credentials.js'
import { ACCESS_TOKEN_TTL_SECONDS, signAccessToken, verifyAccessToken } from '../../src/auth/tokens.js'

const b64 = (text: string) => Buffer.from(text).toString('base64')

t.test('Basic credentials: id before the first colon, secret after it; anything else is nothing', async (t) => {
  t.same(parseBasicAuthorization(`Basic ${b64('id:se:cret')}`), { clientId: 'id', clientSecret: 'se:cret' })
  t.same(parseBasicAuthorization(`basic  ${b64('id:s')}`), { clientId: 'id', clientSecret: 's' }, 'the scheme in any case')
  for (const bad of [undefined, '', 'Basic', 'Basic ', `Bearer ${b64('id:s')}`, `Basic ${b64('id')}`, `Basic ${b64(':s')}`, `Basic ${b64('id:')}`, 'Basic ***', 'Basic abc', `Basic ${b64('id:s')} extra`]) {
    t.equal(parseBasicAuthorization(bad), undefined, String(bad))
  }
})

t.test('an access token verifies with its key until it expires, and with nothing else', async (t) => {
  const key = randomBytes(32)
  const grant = { clientId: randomUUID(), organizationId: randomUUID(), workspaceId: randomUUID() }
  const issuedAt = new Date('2026-11-22T10:00:00.000Z')
  const token = await signAccessToken(key, grant, issuedAt)
  const at = (seconds: number) => new Date(issuedAt.getTime() + seconds * 1000)

  t.same(await verifyAccessToken(key, token, issuedAt), grant)
  t.same(await verifyAccessToken(key, token, at(ACCESS_TOKEN_TTL_SECONDS - 1)), grant, 'good until its last second')
  t.equal(await verifyAccessToken(key, token, at(ACCESS_TOKEN_TTL_SECONDS)), undefined, 'expired after 15 minutes')
  t.equal(await verifyAccessToken(randomBytes(32), token, issuedAt), undefined, 'another key')
  t.equal(await verifyAccessToken(key, `${token}x`, issuedAt), undefined, 'a changed signature')
  t.equal(await verifyAccessToken(key, '', issuedAt), undefined, 'nothing')
})
