import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import ts from 'typescript'

// Every TypeScript example in docs/client.md compiles against the client, as an integrator's
// code would (strict, ES modules): a renamed route or field breaks this test, not the reader.

const root = fileURLToPath(new URL('../../', import.meta.url))
const doc = readFileSync(join(root, 'docs/client.md'), 'utf8')
const examples = [...doc.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!)

t.test('docs/client.md: every example compiles', async (t) => {
  t.ok(examples.length >= 2, `${examples.length} examples`)
  const dir = mkdtempSync(join(tmpdir(), 'flowd-client-docs-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}')
  const files = examples.map((code, i) => {
    const file = join(dir, `example-${i + 1}.ts`)
    writeFileSync(file, code.replaceAll("'../client/src/index.js'", `'${join(root, 'client/src/index.js')}'`))
    return file
  })
  const program = ts.createProgram(files, {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: ['node'],
    typeRoots: [join(root, 'node_modules/@types')],
  })
  const problems = ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file ? `${d.file.fileName.slice(dir.length + 1)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}` : ''
    return JSON.stringify(`${where} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`)
  })
  t.same(problems, [], 'no compile errors')
})
