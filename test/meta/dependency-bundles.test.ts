import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { FormatRegistry, Type } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { Value } from '@sinclair/typebox/value'
import t from 'tap'
import undici, { Agent } from 'undici'
import { childEnv } from '../helpers/cli.js'

// test/loader/dependency-bundles.mjs: test processes and the processes they start load a few
// packages as esbuild bundles. A bundle must be what is loaded, and it must keep what the packages'
// own files give: one copy of a package across its subpaths, and every export of a CommonJS one.

const bundled = (url: string) => /\/node_modules\/\.cache\/flowd-test\/dependency-bundles-[0-9a-f]+\//.test(url)
const unbundled = process.env.TEST_UNBUNDLED_DEPENDENCIES === '1'

t.test('the bundled packages resolve to their bundles, here and in a process a test starts', { skip: unbundled && 'TEST_UNBUNDLED_DEPENDENCIES=1' }, async (t) => {
  for (const specifier of ['kysely', '@sinclair/typebox', '@sinclair/typebox/value', 'undici', 'jose', 'uuid']) {
    t.ok(bundled(import.meta.resolve(specifier)), `${specifier} is loaded from its bundle`)
  }
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', "console.log(import.meta.resolve('kysely'))"], { env: childEnv({}) })
  t.ok(bundled(stdout.trim()), 'a child process loads kysely from its bundle too')
})

t.test("a package's subpaths share one copy of its modules", async (t) => {
  // TypeBox keeps formats in a registry of the root entry that its value and compiler entries read.
  FormatRegistry.Set('dependency-bundles-probe', (value) => value === 'yes')
  const schema = Type.String({ format: 'dependency-bundles-probe' })
  t.equal(Value.Check(schema, 'yes'), true, 'the value entry knows the format the root registered')
  t.equal(Value.Check(schema, 'no'), false, 'and applies it')
  t.equal(TypeCompiler.Compile(schema).Check('yes'), true, 'so does the compiler entry')
})

t.test('a CommonJS package keeps its named exports and its default', async (t) => {
  t.type(Agent, 'function', 'undici exports Agent by name')
  t.equal(Agent, undici.Agent, 'the same Agent as its default export holds')
  t.type(undici.request, 'function', 'and the rest of module.exports')
})
