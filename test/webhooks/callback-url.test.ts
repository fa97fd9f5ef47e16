import t from 'tap'
import { callbackUrlProblem, parseCidrs } from '../../src/webhooks/callback-url.js'

t.test('accepts public https callbacks', async (t) => {
  for (const url of ['https://hooks.example.com/flow', 'https://8.8.8.8/x', 'https://[2001:4860:4860::8888]/x', 'https://example.com:8443/a?b=c']) {
    t.equal(callbackUrlProblem(url, []), undefined, url)
  }
})

t.test('refuses non-https, userinfo, localhost and every spelling of a non-public address', async (t) => {
  const refused: [string, RegExp][] = [
    ['http://hooks.example.com/x', /https/],
    ['ftp://example.com', /https/],
    ['not a url', /not a valid URL/],
    ['https://user:pw@example.com/', /user name or password/],
    ['https://localhost/x', /localhost/],
    ['https://api.localhost/x', /localhost/],
    ['https://localhost./x', /localhost/],
    ['https://127.0.0.1/x', /non-public/],
    ['https://2130706433/x', /non-public/],
    ['https://0x7f.1/x', /non-public/],
    ['https://127.1/x', /non-public/],
    ['https://[::1]/x', /non-public/],
    ['https://[::ffff:127.0.0.1]/x', /non-public/],
    ['https://10.1.2.3/x', /non-public/],
    ['https://192.168.0.10/x', /non-public/],
    ['https://172.16.5.4/x', /non-public/],
    ['https://169.254.169.254/latest/meta-data', /non-public/],
    ['https://0.0.0.0/x', /non-public/],
    ['https://[fd00::1]/x', /non-public/],
    ['https://[fe80::1]/x', /non-public/],
    ['https://100.64.0.1/x', /non-public/],
  ]
  for (const [url, reason] of refused) t.match(callbackUrlProblem(url, []), reason, url)
})

t.test('an allowed private range opens exactly that range', async (t) => {
  const allowed = parseCidrs(['127.0.0.1/32'])
  t.equal(callbackUrlProblem('https://127.0.0.1:9443/hook', allowed), undefined)
  t.match(callbackUrlProblem('https://127.0.0.2/hook', allowed), /non-public/)
  t.match(callbackUrlProblem('https://10.0.0.1/hook', allowed), /non-public/)
})
