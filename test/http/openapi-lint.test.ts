import { readFileSync } from 'node:fs'
import spectralCore from '@stoplight/spectral-core'
import spectralParsers from '@stoplight/spectral-parsers'
import spectralRulesets from '@stoplight/spectral-rulesets'
import t from 'tap'

// The committed openapi.json (the one the service serves and the typed client is made from) passes
// Spectral's OpenAPI ruleset (`spectral:oas`, its recommended rules) without an error or a warning:
// every operation has an operationId, a summary and a description, tags are declared, and so on.

const { Spectral, Document } = spectralCore
const document = readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8')

t.test('openapi.json: no Spectral error or warning', async (t) => {
  const spectral = new Spectral()
  spectral.setRuleset({ extends: [spectralRulesets.oas] } as never)
  const results = await spectral.run(new Document(document, spectralParsers.Json, 'openapi.json'))
  // JSON-escaped: a message never reaches tap unquoted.
  t.same(
    results.map((r) => JSON.stringify(`${r.code} at ${r.path.join('.')}: ${r.message}`)),
    [],
  )
  // The rules do run: the same document without its contact and one operationId is reported.
  const planted = JSON.parse(document)
  delete planted.info.contact
  delete planted.paths['/healthz'].get.operationId
  const found = await spectral.run(new Document(JSON.stringify(planted), spectralParsers.Json, 'planted.json'))
  t.same(found.map((r) => r.code).sort(), ['info-contact', 'operation-operationId'], 'a planted omission is found')
  const operations = Object.values(JSON.parse(document).paths as Record<string, Record<string, { operationId?: string }>>).flatMap((item) => Object.values(item))
  t.ok(operations.length >= 50, `every operation was linted (${operations.length})`)
  const ids = operations.map((o) => o.operationId)
  t.equal(new Set(ids).size, ids.length, 'operationIds are unique')
})
