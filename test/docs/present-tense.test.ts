import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

// The docs and the code's comments state what the project is and why it is built so. How it came
// to be (work items by number, what was tried, figures before and after a change) lives in git log
// and bench/results/*.json, and a reader of the docs has no use for it.

const root = fileURLToPath(new URL('../..', import.meta.url))

const KB = 1000
const DOC_LIMIT = 40 * KB
const PERFORMANCE_LIMIT = 15 * KB

const UNIT = String.raw`(?:ms|µs|us|s|min|MiB|MB|GiB|GB|KiB|KB|%|×|msg/s|events/s|appends/s|tx/s|req/s|cores?)`
const FIGURE = String.raw`[~≈]?\d[\d.,]*\s?${UNIT}?`

/** Each pattern matches a way of narrating the project's making; none matches real data. */
const NARRATION: { name: string; pattern: RegExp }[] = [
  {
    // "session 11", "issue 7", "ticket #3", "stop 29". Not an id ("session 0190…", a UUID, "issue
    // 3a9f"), not a count of a series ("session 1 of 3"), not an option (`--sessions 200`).
    name: 'a numbered work item',
    pattern: /(?<!-)\b(?:sessions?|issues?|tickets?|stops?|sprints?|iterations?|milestones?|work periods?)\s+#?[1-9]\d{0,2}\b(?![-…]|\.\w|\s+of\s+\d)/i,
  },
  { name: 'a work period or sprint', pattern: /\b(?:work(?:ing)? periods?|sprints?)\b/i },
  { name: 'a fix as a point in time', pattern: /\b(?:before|after|since|until|prior to)\s+(?:the|this|that|these|those|our|a)\s+fix(?:es)?\b/i },
  { name: 'a figure that was and now is', pattern: new RegExp(String.raw`\bwas\s+(?:about\s+)?${FIGURE}[^.;\n]{0,80}\bnow\s+${FIGURE}`, 'i') },
  { name: 'a figure as it is now', pattern: new RegExp(String.raw`\bnow\s+[~≈]?\d[\d.,]*(?:\s?${UNIT})?(?:,\s*\d[\d.,]*)*(?:\s+and\s+\d[\d.,]*)?\s?${UNIT}(?![\w/])`, 'i') },
  { name: 'a former value in brackets', pattern: new RegExp(String.raw`\((?:was|were|from)\s+${FIGURE}`, 'i') },
  { name: 'a figure from before', pattern: new RegExp(String.raw`\d[\d.,]*\s?${UNIT}\s+before(?=\s*[).,;]|\s*$)`, 'i') },
  { name: 'a figure that went from one value to another', pattern: new RegExp(String.raw`\b(?:went|dropped|fell|rose|grew|improved|down|up)\s+from\s+${FIGURE}`, 'i') },
  { name: 'a figure changed by an arrow', pattern: new RegExp(String.raw`\d[\d.,]*\s?${UNIT}?\s?(?:→|->)\s?\d[\d.,]*\s?${UNIT}(?![\w/])`) },
  { name: 'a behaviour kept "as before" a change', pattern: /\bas before\b(?=\s*[.,;:)]|\s*$)/i },
  { name: 'a comparison with the past', pattern: /\b(?:(?:faster|slower|better|worse|more|less|fewer|larger|smaller) than (?:before|it was|it used to)|used to (?:take|cost|be \d)|tried and (?:not kept|dropped|rejected))\b/i },
]

const narrations = (text: string) => NARRATION.filter(({ pattern }) => pattern.test(text)).map(({ name }) => name)

/** Every file under dir, recursively. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    return entry.isDirectory() ? filesUnder(path) : entry.isFile() ? [path] : []
  })
}

const scanned = () =>
  [...filesUnder(join(root, 'docs')), ...['README.md', 'CONTRIBUTING.md'].map((f) => join(root, f)).filter((f) => existsSync(f)), ...filesUnder(join(root, 'src'))].filter(
    (file) => !readFileSync(file).includes(0),
  )

t.test('the patterns tell narration from real data', async (t) => {
  for (const line of [
    'Added in session 11, after the fix.',
    'The ingest path (issue 7) batches its appends.',
    'Ticket #3 asked for keyset paging.',
    'Measured at stop 29.',
    'Done in the second work period.',
    'Before the fixes, a rebuild took 40 s.',
    '`q=silva` was 40 ms on one case; now 9 ms.',
    'p99 now 9, 23 and 6 ms.',
    'Peak RSS went from 434 MiB to 283 MiB.',
    'a deep page by one tag 12 → 103 ms',
    'about 0.9 s faster than before',
    '## Tried and not kept',
    'unmarked queries run as before.',
    '**128 deliveries in flight per process** (was 32): an attempt holds its slot',
    'At the default 4 MB it took 315 ms (348 ms before).',
  ]) {
    t.not(narrations(line).length, 0, `narration: ${line}`)
  }
  for (const line of [
    'first divergence: session 0190…, event 5c1e… (revision 1)',
    "message: 'session 0190a0b0-0000-7000-8000-0000000000f2 is not active'",
    'session 00000000-0000-4000-8000-000000000000 not found',
    'session 1 of 3 answered',
    'Step 2, from the editor: trade the one-time token',
    'Whether `actor` may issue a key of `role` for `workspaceId`',
    'npm run bench -- endtoend --rate 100 --sessions 200',
    'Getting the token when the editor is ready (rather than before creating the iframe) keeps it fresh',
    '202 → webhook p99 under 50 ms at 500 messages/s',
    'turn completed → first attempt (outbox, dispatcher claim) | 75 ms | 189 ms',
    'The node no longer waits (its reply was accepted, or its retries are used up).',
    'Streams parked now (see "Parked streams"), read from the database at each scrape',
    'The page was 5 rows long when the session now holding it started.',
    'A lease ends 30 s before its holder would renew it, at most 10 s before the next one.',
  ]) {
    t.same(narrations(line), [], `not narration: ${line}`)
  }
})

t.test('the docs and src state the present, not how it came to be', async (t) => {
  const files = scanned()
  t.ok(files.some((f) => f.endsWith(join('docs', 'performance.md'))), 'docs/performance.md is scanned')
  t.ok(files.some((f) => f.includes(`${join(root, 'src')}`)), 'src is scanned')
  const hits: string[] = []
  for (const file of files) {
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        const found = narrations(line)
        if (found.length) hits.push(`${relative(root, file)}:${i + 1} (${found.join(', ')}): ${line.trim()}`)
      })
  }
  t.same(hits, [], 'state it as it is today, or leave it to the commit message')
})

t.test('the docs stay short enough to read', async (t) => {
  const docs = filesUnder(join(root, 'docs'))
  t.not(docs.length, 0, 'docs/ has files')
  for (const file of docs) {
    const limit = file === join(root, 'docs', 'performance.md') ? PERFORMANCE_LIMIT : DOC_LIMIT
    const size = statSync(file).size
    t.ok(size <= limit, `${relative(root, file)}: ${size} bytes, at most ${limit}`)
  }
})
