// Tests run the TypeScript sources on Node's own type stripping (tsconfig: erasableSyntaxOnly,
// verbatimModuleSyntax). The sources import each other by their built names (`./x.js`, as tsc
// wants for dist/); this maps such an import to the `.ts` file beside it when no `.js` is there.
import { registerHooks } from 'node:module'

registerHooks({
  resolve(specifier, context, nextResolve) {
    try {
      return nextResolve(specifier, context)
    } catch (error) {
      const relative = specifier.startsWith('./') || specifier.startsWith('../')
      if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !relative || !specifier.endsWith('.js')) throw error
      return nextResolve(`${specifier.slice(0, -'.js'.length)}.ts`, context)
    }
  },
})
