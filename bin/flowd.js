#!/usr/bin/env node
import { enableCompileCache } from 'node:module'

// Every command starts a process that compiles the same modules: Node keeps them compiled (in the
// system's temporary folder, or NODE_COMPILE_CACHE) for the next.
enableCompileCache?.()
await import('../dist/src/cli/main.js')
