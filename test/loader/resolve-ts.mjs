// Tests run the TypeScript sources on Node's own type stripping (tsconfig: erasableSyntaxOnly,
// verbatimModuleSyntax). The sources import each other by their built names (`./x.js`, as tsc
// wants for dist/); this maps such an import, relative or a file URL (tap's mocks import those,
// with a query), to the `.ts` file beside it when no `.js` is there.
import { registerHooks } from 'node:module'

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
