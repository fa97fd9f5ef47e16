// Tests run the TypeScript sources on Node's own type stripping (tsconfig: erasableSyntaxOnly,
// verbatimModuleSyntax). The sources import each other by their built names (`./x.js`, as tsc
// wants for dist/); this maps such an import, relative or a file URL (tap's mocks import those,
// with a query), to the `.ts` file beside it when no `.js` is there.
import { enableCompileCache, registerHooks } from 'node:module'
import { fileURLToPath } from 'node:url'

// Each test file is a process of its own that loads much the same sources, as are the CLI and
// service processes the tests start (they inherit the variable): Node's compile cache, which keeps
// type-stripped TypeScript too, spares compiling them again in each.
process.env.NODE_COMPILE_CACHE ||= fileURLToPath(new URL('../../node_modules/.cache/node-compile/', import.meta.url))
enableCompileCache(process.env.NODE_COMPILE_CACHE)

// tap starts each test process with source maps on, and its process tracking (@tapjs/processinfo)
// then looks up the map of every dependency that ships one, which parses it: a fifth of a
// CPU-second a process. No source of this project has a map (the TypeScript is type-stripped in
// place), so off, the coverage report and the stack traces of its code are the same.
process.setSourceMapsEnabled(false)

const builtName = /^(\.{1,2}\/|file:\/\/).*\.js(\?.*)?$/

registerHooks({
  resolve(specifier, context, nextResolve) {
    try {
      return nextResolve(specifier, context)
    } catch (error) {
      if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !builtName.test(specifier)) throw error
      return nextResolve(specifier.replace(/\.js(\?.*)?$/, '.ts$1'), context)
    }
  },
})
