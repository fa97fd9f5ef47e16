import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import t from 'tap'
import { OLDEST_SUPPORTED, unsupportedNode } from '../../bin/check-node.js'

const root = new URL('../../', import.meta.url)
const script = new URL('bin/check-node.js', root).pathname
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { engines: { node: string }; scripts: Record<string, string> }

t.test('a Node older than 22.12 is refused in words; 22.12 and newer run', async (t) => {
  t.match(unsupportedNode('20.20.2'), /needs Node 22\.12 or newer \(24 recommended\), this is 20\.x \(v20\.20\.2\)/)
  t.match(unsupportedNode('22.11.0'), /this is 22\.x/)
  t.match(unsupportedNode('18.0.0'), /Install Node 24 LTS/)
  for (const version of ['22.12.0', '22.20.1', '23.0.0', '24.21.0', '25.1.0']) t.equal(unsupportedNode(version), undefined, `${version} runs`)
  t.equal(pkg.engines.node, `>=${OLDEST_SUPPORTED.major}.${OLDEST_SUPPORTED.minor}`, 'the same oldest version as package.json\'s engines')
})

t.test('install, start and test check first', async (t) => {
  for (const name of ['prepare', 'start', 'test']) t.match(pkg.scripts[name], /^node bin\/check-node\.js && /, `npm ${name === 'prepare' ? 'install' : name} runs the check before anything else`)
  const here = spawnSync(process.execPath, [script], { encoding: 'utf8' })
  t.equal(here.status, 0, 'this Node passes')
  t.equal(here.stderr, '')
})

// Where the machine also has an older Node (Debian's, say), the script is run by it as npm would.
const systemNode = '/usr/bin/node'
const systemVersion = existsSync(systemNode) ? execFileSync(systemNode, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim() : undefined
if (systemVersion && unsupportedNode(systemVersion)) {
  t.test(`Node ${systemVersion} stops at once with the sentence`, async (t) => {
    const old = spawnSync(systemNode, [script], { encoding: 'utf8' })
    t.equal(old.status, 1)
    t.match(old.stderr, new RegExp(`needs Node 22\\.12 or newer \\(24 recommended\\), this is ${systemVersion.split('.')[0]}\\.x`))
  })
}
