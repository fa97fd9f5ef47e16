import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { assertionMessage } from '../helpers/assertion-message.js'

// tap runs what .taprc's include and exclude leave it, a process a file; the folders .taprc
// excludes are run each by test/by-folder/<folder>.test.ts in one process. Between the two, every test file
// must run, and none twice.

const root = fileURLToPath(new URL('../../', import.meta.url))
const testFolder = fileURLToPath(new URL('../', import.meta.url))

const everyTestFile = readdirSync(testFolder, { recursive: true, encoding: 'utf8' })
  .map((entry) => `test/${entry.split('\\').join('/')}`)
  .filter((path) => path.endsWith('.test.ts') && !/\/(fixtures?|dist)\//.test(path))
  .sort()

/** What `tap` runs with no arguments, as `tap list` prints it; tap's own variables are left out so that it lists as a fresh run would. */
function tapsList(): string[] {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^_?TAP/.test(name)))
  const listed = spawnSync(process.execPath, [fileURLToPath(new URL('../../node_modules/tap/dist/esm/run.mjs', import.meta.url)), 'list'], { cwd: root, env, encoding: 'utf8' })
  t.equal(listed.status, 0, assertionMessage(listed.stderr))
  return listed.stdout.split('\n').filter(Boolean).sort()
}

/** The folder `test/by-folder/<folder>.test.ts` runs in one process, if it is such a runner. */
function folderRunBy(runner: string): string | undefined {
  const folder = runner.match(/^test\/by-folder\/([^/]+)\.test\.ts$/)?.[1]
  if (!folder || !existsSync(`${testFolder}${folder}`)) return undefined
  return readFileSync(`${root}${runner}`, 'utf8').includes(`runFolderInOneProcess(new URL('../${folder}/', import.meta.url))`) ? folder : undefined
}

t.test('every test file runs, in a process of its own or in its folder\'s, and none runs twice', async (t) => {
  const listed = tapsList()
  const folders = listed.map(folderRunBy).filter((folder) => folder !== undefined)
  const runs = new Map<string, number>()
  for (const file of listed) runs.set(file, (runs.get(file) ?? 0) + 1)
  for (const folder of folders) {
    for (const file of everyTestFile.filter((path) => path.startsWith(`test/${folder}/`))) runs.set(file, (runs.get(file) ?? 0) + 1)
  }
  t.same(everyTestFile.filter((file) => runs.get(file) !== 1), [], 'no test file is left out or run twice')
})

