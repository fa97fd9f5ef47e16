import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

// CONTRIBUTING.md names files and the functions in them; when code moves, this says which of its
// lines to change. Paths in fenced code are not checked: snippets hold import specifiers, and the
// worked example's code is not in the repository.

const root = fileURLToPath(new URL('../../', import.meta.url))
const guide = readFileSync(join(root, 'CONTRIBUTING.md'), 'utf8')
const prose = guide.replace(/^```[\s\S]*?^```/gm, '')

const ROOT_FILES = new Set(['README.md', 'CONTRIBUTING.md', 'package.json', 'tsconfig.json', 'openapi.json', '.taprc', 'Dockerfile', 'docker-compose.yml'])
const FOLDERS = /^(src|migrations|test|bench|web|docs|client|bin)\//

const backticked = (text: string): string[] => [...text.matchAll(/`([^`\n]+)`/g)].map((match) => match[1]!)
const isRepositoryPath = (span: string) => !/\s/.test(span) && (FOLDERS.test(span) || ROOT_FILES.has(span))

/** The files the worked example creates, listed between its markers: they must not exist. */
const exampleCreates = (() => {
  const block = /<!-- example-creates -->([\s\S]*?)<!-- \/example-creates -->/.exec(guide)?.[1] ?? ''
  return backticked(block).filter(isRepositoryPath)
})()

/**
 * Whether a path exists; one with placeholders (`src/domain/<name>.ts`) exists when some file
 * under the folder before its first placeholder matches it with each placeholder a path segment's text.
 */
function exists(path: string): boolean {
  if (!path.includes('<')) return existsSync(join(root, path))
  const folder = path.slice(0, path.lastIndexOf('/', path.indexOf('<')) + 1)
  const rest = path.slice(folder.length)
  const pattern = new RegExp(`^${rest.split(/<[^>]+>/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^/]+')}$`)
  if (!existsSync(join(root, folder))) return false
  return readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' }).some((entry) => pattern.test(entry.split('\\').join('/')))
}

t.test('every repository path the guide names exists, but the files its worked example creates', async (t) => {
  const named = [...new Set(backticked(prose).filter(isRepositoryPath))]
  t.ok(named.length >= 60, `the guide names ${named.length} paths`)
  t.ok(named.some((path) => path.includes('<')), 'placeholder paths are checked too')
  const missing = named.filter((path) => !exampleCreates.includes(path) && !exists(path))
  t.same(missing, [], 'each of these is named in CONTRIBUTING.md and is not in the repository')
})

t.test('each file the map names by its bare name is in a folder its paragraph is about', async (t) => {
  const map = prose.split('## 1. The map of the code')[1]?.split('\n## ')[0] ?? ''
  const absent: string[] = []
  let checked = 0
  for (const paragraph of map.split(/\n\s*\n/)) {
    // The folders a paragraph is about are its bold ones: **`src/engine/`**, **The top of `src/`**.
    const folders = [...paragraph.matchAll(/\*\*[^*]*?`([\w/.-]+\/)`[^*]*?\*\*/g)].map((match) => match[1]!)
    const bare = backticked(paragraph).filter((span) => /^[\w./-]+\.(ts|tsx|mjs|md|json)$/.test(span) && !isRepositoryPath(span))
    if (folders.length === 0) continue
    for (const name of bare) {
      checked++
      const found = folders.some((folder) =>
        existsSync(join(root, folder, name)) ||
        readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' }).some((entry) => !entry.includes('node_modules') && entry.split('\\').join('/').endsWith(`/${name}`)),
      )
      if (!found) absent.push(`${name} (under ${folders.join(', ')})`)
    }
  }
  t.ok(checked >= 40, `${checked} bare names`)
  t.same(absent, [], 'each is named in the map of CONTRIBUTING.md and is not in its folder')
})

t.test("the worked example's new files are not in the repository", async (t) => {
  t.ok(exampleCreates.length >= 5, `the example lists ${exampleCreates.length} files it creates`)
  t.same(exampleCreates.filter((path) => existsSync(join(root, path))), [], 'the repository has no tags resource: the example lives in the guide only')
})

t.test('each function of the end-to-end table is in the file its row names', async (t) => {
  const section = prose.split('## 2. One request, end to end')[1]?.split('\n## ')[0] ?? ''
  const rows = section.split('\n').filter((line) => /^\| \d+ \|/.test(line))
  t.ok(rows.length >= 20, `${rows.length} steps`)
  const absent: string[] = []
  for (const row of rows) {
    const [, step, fileCell, functionsCell] = row.split('|').map((cell) => cell.trim())
    const file = backticked(fileCell ?? '')[0]
    const functions = backticked(functionsCell ?? '')
    if (!file || functions.length === 0 || !existsSync(join(root, file))) {
      absent.push(`step ${step}: ${file ?? '(no file)'}`)
      continue
    }
    const source = readFileSync(join(root, file), 'utf8')
    for (const name of functions) {
      // `session.decide` names a member: each part must be in the file.
      const parts = name.replace(/\(\)$/, '').split('.')
      if (!parts.every((part) => new RegExp(`\\b${part}\\b`).test(source))) absent.push(`step ${step}: ${name} in ${file}`)
    }
  }
  t.same(absent, [], 'each is named in the table of CONTRIBUTING.md and not found where it says')
})

t.test('the README points at the guide, and the guide reads in one sitting', async (t) => {
  t.match(readFileSync(join(root, 'README.md'), 'utf8'), /\]\(CONTRIBUTING\.md\)/)
  t.ok(Buffer.byteLength(guide) < 40_000, `${Buffer.byteLength(guide)} bytes`)
})
