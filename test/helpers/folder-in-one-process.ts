import { readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import t from 'tap'

/** One of `of` shares of a folder's files, taken in turn in name order: the first, the `of + 1`th, … for part 1. */
export interface Part {
  part: number
  of: number
}

/** The test files under `folder` (a `file:` URL ending in `/`) in name order, relative to it; those of `share` alone when given. */
export function testFilesOf(folder: URL, share?: Part): string[] {
  const files = readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .map((entry) => entry.split('\\').join('/'))
    .filter((entry) => entry.endsWith('.test.ts'))
    .sort()
  return share ? files.filter((_, index) => index % share.of === share.part - 1) : files
}

/**
 * Runs the test files under `folder` (a `file:` URL ending in `/`), or `share` of them, in this
 * process in name order: each file's tests join this process's queue as its module loads, and run
 * one after another as they would in a process of the file's own. A file that fails to load is a
 * failure of its own, and the rest still run.
 *
 * Starting a test process costs one to two CPU-seconds (tap's tracking, the loaders, compiling and
 * warming the app's code), more than most files' own work; a folder in one process pays it once.
 * A folder whose files take minutes is run in shares, so that no one process is left running long
 * after the others. .taprc's `exclude` names the folders run so, each by
 * `test/by-folder/<folder>[-<part>].test.ts`; `npx tap test/http/sectors.test.ts` still runs one
 * file alone.
 */
export async function runFolderInOneProcess(folder: URL, share?: Part): Promise<void> {
  for (const file of testFilesOf(folder, share)) {
    const url = new URL(file, folder)
    try {
      await import(url.href)
    } catch (error) {
      t.fail(`${fileURLToPath(url)} did not load`, { error })
    }
  }
}
