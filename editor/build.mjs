// Builds the editor into ../dist/editor when its sources changed since the last build (or with
// --force), installing the editor's own dependencies first when they are missing or out of date.
// The editor has its own package (React 19) because tap's reporter needs React 18 at the root.
// --optional: a failure is reported and the script exits 0 (`npm start` then serves a 503 page).
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const editorDir = dirname(fileURLToPath(import.meta.url))
const outDir = join(editorDir, '..', 'dist', 'editor')
const force = process.argv.includes('--force')
const optional = process.argv.includes('--optional')

const newest = (path) => {
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  return readdirSync(path).reduce((max, name) => Math.max(max, newest(join(path, name))), stat.mtimeMs)
}
const mtime = (path) => (existsSync(path) ? statSync(path).mtimeMs : 0)

function installDependencies() {
  const lock = join(editorDir, 'package-lock.json')
  const installed = join(editorDir, 'node_modules', '.package-lock.json')
  if (existsSync(installed) && mtime(installed) >= mtime(lock)) return
  console.log('editor: installing its dependencies (editor/node_modules)')
  // Under npm, reuse the npm that runs us; otherwise the one on PATH.
  const npm = process.env.npm_execpath
  const [command, args] = npm && npm.endsWith('.js') ? [process.execPath, [npm]] : ['npm', []]
  const result = spawnSync(command, [...args, 'ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: editorDir, stdio: 'inherit' })
  if (result.status !== 0) throw new Error(`npm ci in editor/ failed (exit ${result.status ?? result.signal})`)
}

function upToDate() {
  const built = mtime(join(outDir, 'index.html'))
  if (built === 0) return false
  // ../src/domain: the editor imports the service's limits and field types from there.
  const sources = [join(editorDir, 'src'), join(editorDir, '..', 'src', 'domain'), join(editorDir, 'index.html'), join(editorDir, 'vite.config.ts'), join(editorDir, 'package-lock.json')]
  return sources.every((path) => !existsSync(path) || newest(path) <= built)
}

try {
  if (!force && upToDate()) process.exit(0)
  installDependencies()
  const { build } = await import('vite')
  await build({ configFile: join(editorDir, 'vite.config.ts'), logLevel: 'warn' })
  console.log(`editor: built into ${outDir}`)
} catch (error) {
  console.error(`editor: build failed: ${error instanceof Error ? error.message : String(error)}`)
  if (!optional) process.exit(1)
  console.error('editor: the service will answer /editor with 503 until `npm run build:editor` succeeds')
}
