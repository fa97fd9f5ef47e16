// Test processes, and the services and commands they start, load a few dependencies as one file
// each instead of their hundreds: kysely, TypeBox, undici, jose and uuid are 700 of the 1,400
// modules a test of the app loads, and a module costs its resolution, read and link whatever its
// size, which made them a quarter of a CPU-second of every such process. The code that runs is the
// same, bundled by esbuild from the installed packages into node_modules/.cache on first use (and
// again when a version changes). `TEST_UNBUNDLED_DEPENDENCIES=1` loads the packages' own files.
//
// One bundle build holds all the entries of a package, so its subpaths share one copy of its
// modules (TypeBox's registries, kysely's classes). Only `import` is redirected: a package that
// CommonJS code requires keeps the copy Node gives it, as it would beside an ES import anyway.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire, registerHooks } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

/** Each bundled package with the specifiers the project (and its dependencies) import from it. */
const BUNDLED = {
  kysely: ['kysely', 'kysely/helpers/postgres'],
  '@sinclair/typebox': ['@sinclair/typebox', '@sinclair/typebox/compiler', '@sinclair/typebox/errors', '@sinclair/typebox/system', '@sinclair/typebox/type', '@sinclair/typebox/value'],
  undici: ['undici'],
  jose: ['jose'],
  uuid: ['uuid'],
}

const root = fileURLToPath(new URL('../../', import.meta.url))
const requireFromRoot = createRequire(join(root, 'package.json'))

/** Changes with the checkout's place, each bundled package's version, esbuild's and this file. */
function cacheKey() {
  const hash = createHash('sha256').update(root).update(readFileSync(fileURLToPath(import.meta.url)))
  for (const name of [...Object.keys(BUNDLED), 'esbuild']) hash.update(readFileSync(join(root, 'node_modules', name, 'package.json')))
  return hash.digest('hex').slice(0, 16)
}

/** Where `specifier` resolves for an ES import from the project (this folder shares its node_modules). */
const entryOf = (specifier) => import.meta.resolve(specifier)

const isEsModule = (file) => file.endsWith('.mjs') || /^\s*(import|export)\s/m.test(readFileSync(file, 'utf8'))

/** Builds every package's bundles into a folder of its own, then moves it to `final`; answers the manifest. */
async function build(final) {
  const { build: esbuild } = await import('esbuild')
  mkdirSync(join(final, '..'), { recursive: true })
  const building = mkdtempSync(`${final}-building-`)
  const manifest = {}
  for (const [name, specifiers] of Object.entries(BUNDLED)) {
    const entryPoints = {}
    for (const [index, specifier] of specifiers.entries()) {
      const url = entryOf(specifier)
      const file = fileURLToPath(url)
      const entryName = `${name.replace('/', '+')}-${index}`
      if (isEsModule(file)) {
        entryPoints[entryName] = file
      } else {
        // CommonJS: an ES entry that names each export, as Node's own import of it would offer them.
        const names = Object.keys(requireFromRoot(file)).filter((key) => key !== 'default' && /^[A-Za-z_$][\w$]*$/.test(key))
        const wrapper = join(building, `${entryName}.entry.mjs`)
        writeFileSync(wrapper, `import module from ${JSON.stringify(file)}\nexport default module\nexport const { ${names.join(', ')} } = module\n`)
        entryPoints[entryName] = wrapper
      }
      manifest[url] = pathToFileURL(join(final, `${entryName}.mjs`)).href
    }
    await esbuild({
      entryPoints,
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      outdir: building,
      outExtension: { '.js': '.mjs' },
      chunkNames: `${name.replace('/', '+')}-[hash]`,
      logLevel: 'error',
      // CommonJS inside a bundle requires Node's built-in modules at run time.
      banner: { js: "import { createRequire as createRequireOfBundle } from 'node:module'; const require = createRequireOfBundle(import.meta.url);" },
    })
  }
  writeFileSync(join(building, 'manifest.json'), JSON.stringify(manifest))
  try {
    renameSync(building, final)
  } catch {
    // Another process built them first: theirs are the same.
    rmSync(building, { recursive: true, force: true })
  }
  return JSON.parse(readFileSync(join(final, 'manifest.json'), 'utf8'))
}

async function bundles() {
  const final = join(root, 'node_modules', '.cache', 'flowd-test', `dependency-bundles-${cacheKey()}`)
  const manifest = join(final, 'manifest.json')
  return existsSync(manifest) ? JSON.parse(readFileSync(manifest, 'utf8')) : build(final)
}

if (process.env.TEST_UNBUNDLED_DEPENDENCIES !== '1') {
  const bundleOf = new Map(Object.entries(await bundles()))
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const resolved = nextResolve(specifier, context)
      const bundle = context.conditions?.includes('import') ? bundleOf.get(resolved.url) : undefined
      return bundle ? { url: bundle, format: 'module', shortCircuit: true } : resolved
    },
  })
}
