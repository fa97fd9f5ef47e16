import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { defaultWebDir } from '../../src/http/routes/web.js'

const dir = defaultWebDir()

t.test("the editor's bundle holds the node types' exits and limits, not their checks, their runs or TypeBox", async (t) => {
  const html = readFileSync(join(dir, 'editor.html'), 'utf8')
  const scripts = [...html.matchAll(/<(?:script[^>]*\bsrc|link[^>]*rel="modulepreload"[^>]*\bhref)="\/assets\/([^"]+\.js)"/g)].map((match) => match[1]!)
  t.ok(scripts.length > 0, 'the page loads its scripts from /assets/')
  const code = scripts.map((script) => readFileSync(join(dir, 'assets', script), 'utf8')).join('\n')
  // What the editor reads: a question's input kinds, a condition's operators, the channel's limits.
  t.match(code, '"phone","date","media","choice"', 'the input kinds')
  t.match(code, '"starts_with"', 'the operators')
  t.match(code, 'rowDescription:72', 'the limits')
  // What it must not carry: a check (validator), a run (interpreter), TypeBox's schema builder.
  t.notMatch(code, 'compares numbers; value must be a number', "the condition's check")
  t.notMatch(code, 'invalid reply to', "the question's run")
  t.notMatch(code, 'describe the label: the model picks by the description', "the AI step's check")
  t.notMatch(code, "Classify the user's message", "the AI step's prompt, which its run builds")
  t.notMatch(code, 'TypeBox.Kind', 'TypeBox')
})
