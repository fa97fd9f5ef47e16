import t from 'tap'

// tap computes its test processes' loaders from the plugin set it was installed with, and rebuilds
// for .taprc's set only after the run has started: without `tap build` at install (package.json's
// `prepare`), the first run on a fresh clone, which is every CI run, loads @tapjs/typescript's
// ts-node into each test file and takes about twice as long.
t.test('test files run on Node\'s type stripping alone, without tap\'s TypeScript loader', async (t) => {
  const loaders = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].filter((arg) => arg.includes('@tapjs/typescript'))
  t.same(loaders, [], 'no @tapjs/typescript loader in this process')
  t.ok(process.features.typescript, 'Node strips the types itself')
})
