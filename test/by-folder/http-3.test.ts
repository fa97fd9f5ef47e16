import { runFolderInOneProcess } from '../helpers/folder-in-one-process.js'

await runFolderInOneProcess(new URL('../http/', import.meta.url), { part: 3, of: 3 })
