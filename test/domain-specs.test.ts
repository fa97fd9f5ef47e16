import { readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

// The specs of src/domain, all in this one process: they are pure (no storage, no network, no
// clock they do not set), so a process each would cost the suite far more in starting processes
// than they take to run. .taprc leaves test/domain out of tap's own list; `npx tap
// test/domain/flow.test.ts` still runs one spec alone.

const folder = fileURLToPath(new URL('./domain/', import.meta.url))
const specs = readdirSync(folder, { recursive: true, encoding: 'utf8' })
  .map((entry) => entry.split('\\').join('/'))
  .filter((entry) => entry.endsWith('.test.ts'))
  .sort()
for (const spec of specs) await import(new URL(`./domain/${spec}`, import.meta.url).href)
