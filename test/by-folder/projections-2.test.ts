import { runFolderInOneProcess } from '../helpers/folder-in-one-process.js'

await runFolderInOneProcess(new URL('../projections/', import.meta.url), { part: 2, of: 3 })
