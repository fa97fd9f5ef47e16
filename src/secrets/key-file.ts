import { randomBytes } from 'node:crypto'
import { access, link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

/**
 * The text of a key file in `dataDir` (trimmed), created with `generate()`'s text (mode 0600) when
 * there is none: the keys the embedded default makes for itself once and reuses on every start
 * (the editor's signing secret, the secrets master key).
 */
export async function keyFileText(dataDir: string, fileName: string, generate: () => string): Promise<string> {
  const file = join(dataDir, fileName)
  if (!(await exists(file))) await createKeyFile(dataDir, file, generate())
  return (await readFile(file, 'utf8')).trim()
}

const exists = (file: string) =>
  access(file).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return false
      throw error
    },
  )

// Written whole under another name, then linked into place: a process starting at the same moment
// either finds the complete file or creates it, never reads it half written.
async function createKeyFile(dataDir: string, file: string, text: string): Promise<void> {
  await mkdir(dataDir, { recursive: true })
  const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`
  await writeFile(draft, `${text}\n`, { mode: 0o600, flag: 'wx' })
  try {
    await link(draft, file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  } finally {
    await unlink(draft)
  }
}
