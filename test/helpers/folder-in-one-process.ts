import { readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import t from 'tap'

/**
 * Runs every test file under `folder` (a `file:` URL ending in `/`) in this process, in name order:
 * each file's tests join this process's queue as its module loads, and run one after another as
 * they would in a process of the file's own. A file that fails to load is a failure of its own,
 * and the rest still run.
 *
 * Starting a test process costs about a CPU-second (tap's tracking, loaders, the first compile of
 * the app), more than most files' own work; a folder in one process pays it once, and warms the
 * code it shares. .taprc's `exclude` names the folders run so, each by
 * `test/by-folder/<folder>.test.ts`; `npx tap test/http/sectors.test.ts` still runs one file alone.
 */
export async function runFolderInOneProcess(folder: URL): Promise<void> {
  const files = readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .map((entry) => entry.split('\\').join('/'))
    .filter((entry) => entry.endsWith('.test.ts'))
    .sort()
  for (const file of files) {
    const url = new URL(file, folder)
    try {
      await import(url.href)
    } catch (error) {
      t.fail(`${fileURLToPath(url)} did not load`, { error })
    }
  }
}
