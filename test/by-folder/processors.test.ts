import { runFolderInOneProcess } from '../helpers/folder-in-one-process.js'

await runFolderInOneProcess(new URL('../processors/', import.meta.url))
