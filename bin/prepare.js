#!/usr/bin/env node
// `npm install`'s prepare step: the service's build, the web front ends' build and tap's build for
// .taprc's plugins. None needs another's output, so they run side by side, a fresh clone's install
// the shorter for it. Exits with the code of the first step that failed, once all have ended.
import { spawn } from 'node:child_process'

// Under npm, the npm that runs us; otherwise the one on PATH.
const npm = process.env.npm_execpath?.endsWith('.js') ? [process.execPath, process.env.npm_execpath] : ['npm']
const steps = [
  [...npm, 'run', 'build', '--silent'],
  [...npm, 'run', 'build:web', '--silent'],
  ['tap', 'build'],
]

const finished = steps.map(
  ([command, ...args]) =>
    new Promise((resolve) => {
      const child = spawn(command, args, { stdio: 'inherit' })
      child.on('error', (error) => {
        console.error(`${[command, ...args].join(' ')}: ${error.message}`)
        resolve(1)
      })
      child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)))
    }),
)
const codes = await Promise.all(finished)
process.exitCode = codes.find((code) => code !== 0) ?? 0
