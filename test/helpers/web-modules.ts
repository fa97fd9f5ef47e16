import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = fileURLToPath(new URL('../../', import.meta.url))

/** The part of esbuild's API used here (esbuild is a dependency of web/, whose Vite brings it). */
interface Esbuild {
  build(options: Record<string, unknown>): Promise<{ outputFiles: { text: string }[] }>
}

/**
 * The exports of modules of web/src (`paths`, relative to the repository), loaded in this process
 * as one module: bundled with all they import by the web package's esbuild, since the front ends'
 * files import one another without extensions and reach .tsx files (a node type's form), which
 * Node does not load. For their pure functions, tested without a browser. One bundle shares one
 * copy of each module, so an error class of one is the class another throws.
 */
export async function importWebModules<Module>(...paths: string[]): Promise<Module> {
  const esbuild = createRequire(join(root, 'web/package.json'))('esbuild') as Esbuild
  const { outputFiles } = await esbuild.build({
    stdin: { contents: paths.map((path) => `export * from ${JSON.stringify(join(root, path))}`).join('\n'), resolveDir: root, loader: 'ts' },
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'node',
    jsx: 'automatic',
    loader: { '.css': 'empty' },
    logLevel: 'error',
  })
  const dir = mkdtempSync(join(tmpdir(), 'web-module-'))
  try {
    const file = join(dir, 'module.mjs')
    writeFileSync(file, outputFiles[0]!.text)
    return (await import(pathToFileURL(file).href)) as Module
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
