import t from 'tap'
import { MAX_SECRET_VALUE_BYTES, MAX_SECRETS_PER_WORKSPACE, SECRET_NAME_PATTERN } from '../../src/domain/secret-rules.js'
import { examples } from '../helpers/decider-spec.js'

t.test("a secret's name: letters, digits and _, 1 to 64", async (t) => {
  examples(t, (name: string) => SECRET_NAME_PATTERN.test(name), [
    ['letters and digits', ['shop2'], true],
    ['an underscore first', ['_token'], true],
    ['64 characters', ['a'.repeat(64)], true],
    ['65 characters', ['a'.repeat(65)], false],
    ['empty', [''], false],
    ['a dot', ['shop.key'], false],
    ['a dash', ['shop-key'], false],
    ['a space', ['shop key'], false],
  ])
})

t.test('the limits the API and the dashboard share', async (t) => {
  t.equal(MAX_SECRET_VALUE_BYTES, 8192, 'a value of 8 KB')
  t.equal(MAX_SECRETS_PER_WORKSPACE, 100, 'one page of the largest size lists them all')
})
