import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { assertionMessage } from '../helpers/assertion-message.js'
import { testFilesOf } from '../helpers/folder-in-one-process.js'

// tap runs what .taprc's include and exclude leave it, a process a file; the folders .taprc
// excludes are run by test/by-folder/<folder>[-<part>].test.ts, a process a folder or a share of
// one. Between the two, every test file must run, and none twice.

const root = fileURLToPath(new URL('../../', import.meta.url))

const everyTestFile = testFilesOf(new URL('../', import.meta.url))
  .map((path) => `test/${path}`)
  .filter((path) => !/\/(fixtures?|dist)\//.test(path))

/** What `tap` runs with no arguments, as `tap list` prints it; tap's own variables are left out so that it lists as a fresh run would. */
function tapsList(): string[] {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^_?TAP/.test(name)))
  const listed = spawnSync(process.execPath, [fileURLToPath(new URL('../../node_modules/tap/dist/esm/run.mjs', import.meta.url)), 'list'], { cwd: root, env, encoding: 'utf8' })
  t.equal(listed.status, 0, assertionMessage(listed.stderr))
  return listed.stdout.split('\n').filter(Boolean).sort()
}

const runnerCall = /runFolderInOneProcess\(new URL\('\.\.\/([^/']+)\/', import\.meta\.url\)(?:, \{ part: (\d+), of: (\d+) \})?\)/

/** The files `test/by-folder/<folder>[-<part>].test.ts` runs in one process, if it is such a runner. */
function runBy(runner: string): { files: string[] } | undefined {
  if (!/^test\/by-folder\/[^/]+\.test\.ts$/.test(runner)) return undefined
  const call = readFileSync(`${root}${runner}`, 'utf8').match(runnerCall)
  if (!call) return undefined
  const [, folder, part, of] = call
  const folderUrl = new URL(`../${folder}/`, import.meta.url)
  if (!existsSync(folderUrl)) return undefined
  const files = testFilesOf(folderUrl, part && of ? { part: Number(part), of: Number(of) } : undefined)
  return { files: files.map((file) => `test/${folder}/${file}`) }
}

const listed = tapsList()

t.test('every test file runs, in a process of its own or in its folder\'s, and none runs twice', async (t) => {
  const runs = new Map<string, number>()
  for (const file of listed) runs.set(file, (runs.get(file) ?? 0) + 1)
  for (const run of listed.map(runBy)) for (const file of run?.files ?? []) runs.set(file, (runs.get(file) ?? 0) + 1)
  t.same(everyTestFile.filter((file) => runs.get(file) !== 1), [], 'no test file is left out or run twice')
})

t.test("a file that shares its folder's process leaves the process's own settings alone", async (t) => {
  // In one process, the root's hooks, plan and concurrency are every file's: a file sets its own on
  // a test of its own. (A longer timeout for the root only gives the whole process longer.)
  const processWide = /^t\.(before|beforeEach|after|afterEach|plan|jobs)\b/m
  const shared = listed.flatMap((runner) => runBy(runner)?.files ?? [])
  const offending = shared.filter((file) => processWide.test(readFileSync(`${root}${file}`, 'utf8')))
  t.same(offending, [], 'no root-level before, after, plan or jobs')
})
