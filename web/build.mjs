// Builds the web front ends (the editor and the dashboard) into ../dist/web when their sources
// changed since the last build (or with --force), installing this package's own dependencies first
// when they are missing or out of date, then writes a gzip and a brotli copy of every text asset
// so the service sends them compressed without compressing per request.
// The web package has its own package (React 19) because tap's reporter needs React 18 at the root.
// --optional: a failure is reported and the script exits 0 (`npm start` then serves a 503 page).
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'

const webDir = dirname(fileURLToPath(import.meta.url))
const outDir = join(webDir, '..', 'dist', 'web')
const force = process.argv.includes('--force')
const optional = process.argv.includes('--optional')
const PAGES = ['editor.html', 'dashboard.html']

const newest = (path) => {
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  return readdirSync(path).reduce((max, name) => Math.max(max, newest(join(path, name))), stat.mtimeMs)
}
const mtime = (path) => (existsSync(path) ? statSync(path).mtimeMs : 0)

function installDependencies() {
  const lock = join(webDir, 'package-lock.json')
  const installed = join(webDir, 'node_modules', '.package-lock.json')
  if (existsSync(installed) && mtime(installed) >= mtime(lock)) return
  console.log('web: installing its dependencies (web/node_modules)')
  // Under npm, reuse the npm that runs us; otherwise the one on PATH.
  const npm = process.env.npm_execpath
  const [command, args] = npm && npm.endsWith('.js') ? [process.execPath, [npm]] : ['npm', []]
  const result = spawnSync(command, [...args, 'ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: webDir, stdio: 'inherit' })
  if (result.status !== 0) throw new Error(`npm ci in web/ failed (exit ${result.status ?? result.signal})`)
}

function upToDate() {
  const built = Math.min(...PAGES.map((page) => mtime(join(outDir, page))))
  if (built === 0) return false
  // ../src/domain and ../client/src: the apps import the service's node types, limits, field types and API types from there.
  const sources = [join(webDir, 'src'), join(webDir, '..', 'src', 'domain'), join(webDir, '..', 'client', 'src'), ...PAGES.map((page) => join(webDir, page)), join(webDir, 'vite.config.ts'), join(webDir, 'package-lock.json')]
  return sources.every((path) => !existsSync(path) || newest(path) <= built)
}

/** One build at a time (tests and `npm start` may start builds side by side); a lock older than 5 minutes is stale. */
async function withBuildLock(build) {
  const lock = join(outDir, '..', '.web-build.lock')
  mkdirSync(dirname(lock), { recursive: true })
  for (;;) {
    try {
      mkdirSync(lock)
      break
    } catch {
      if (Date.now() - mtime(lock) > 5 * 60_000) rmSync(lock, { recursive: true, force: true })
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
  }
  try {
    return await build()
  } finally {
    rmdirSync(lock)
  }
}

/** Files of earlier builds, once older than 10 minutes: by then no page still loading needs them. */
function pruneOldAssets(builtAt) {
  const assets = join(outDir, 'assets')
  for (const name of readdirSync(assets)) {
    const modified = mtime(join(assets, name))
    if (modified < builtAt - 1000 && modified < Date.now() - 10 * 60_000) rmSync(join(assets, name), { force: true })
  }
}

/** `name.gz` and `name.br` beside each script, style sheet and SVG of the build. */
function compressAssets() {
  const assets = join(outDir, 'assets')
  for (const name of readdirSync(assets)) {
    if (!/\.(js|css|svg)$/.test(name)) continue
    const content = readFileSync(join(assets, name))
    writeFileSync(join(assets, `${name}.gz`), gzipSync(content, { level: 9 }))
    writeFileSync(join(assets, `${name}.br`), brotliCompressSync(content, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: content.length } }))
  }
}

try {
  if (!force && upToDate()) process.exit(0)
  await withBuildLock(async () => {
    if (!force && upToDate()) return
    installDependencies()
    const builtAt = Date.now()
    const { build } = await import('vite')
    await build({ configFile: join(webDir, 'vite.config.ts'), logLevel: 'warn' })
    compressAssets()
    pruneOldAssets(builtAt)
    console.log(`web: built into ${outDir}`)
  })
} catch (error) {
  console.error(`web: build failed: ${error instanceof Error ? error.message : String(error)}`)
  if (!optional) process.exit(1)
  console.error('web: the service will answer /editor and /dashboard with 503 until `npm run build:web` succeeds')
}
