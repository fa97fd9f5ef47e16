import { runFolderInOneProcess } from '../helpers/folder-in-one-process.js'

await runFolderInOneProcess(new URL('../cli/', import.meta.url), { part: 1, of: 2 })
