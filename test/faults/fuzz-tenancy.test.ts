import t from 'tap'
import { fuzzRoutes } from '../helpers/fuzz.js'

// Property-based fuzzing (fast-check) of one group of routes, 100 cases a route unless FUZZ_RUNS
// says otherwise; the harness, the other groups and how to replay a run are in test/helpers/fuzz.ts.
t.test('fuzzing the workspaces, clients, API keys and sectors routes: never a 5xx, every error in the spec shape, the process stays up', (t) => fuzzRoutes(t, 'workspaces, clients, API keys and sectors'))
