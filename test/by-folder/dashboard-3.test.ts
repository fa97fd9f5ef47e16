import { runFolderInOneProcess } from '../helpers/folder-in-one-process.js'

await runFolderInOneProcess(new URL('../dashboard/', import.meta.url), { part: 3, of: 3 })
