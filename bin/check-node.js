#!/usr/bin/env node
// Run first by `npm start` and `npm test`: on a Node.js older than package.json's "engines" the
// project would fail late and cryptically (the tests' loader needs node:module's registerHooks), so
// this stops at once and says what to install. Written for any Node: no syntax newer than ES2017.
import { fileURLToPath } from 'node:url'

export const OLDEST_SUPPORTED = { major: 22, minor: 12 }

/** The sentence to stop with on `version` (as in `process.versions.node`), or undefined where it runs. */
export function unsupportedNode(version) {
  const [major, minor] = version.split('.').map(Number)
  if (major > OLDEST_SUPPORTED.major || (major === OLDEST_SUPPORTED.major && minor >= OLDEST_SUPPORTED.minor)) return undefined
  return (
    `The Conversation Flow Service needs Node ${OLDEST_SUPPORTED.major}.${OLDEST_SUPPORTED.minor} or newer (24 recommended), this is ${major}.x (v${version}).\n` +
    'Install Node 24 LTS (https://nodejs.org, or `nvm install 24`), then run the command again.'
  )
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const refusal = unsupportedNode(process.versions.node)
  if (refusal) {
    console.error(refusal)
    process.exit(1)
  }
}
