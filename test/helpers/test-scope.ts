/**
 * How much of the repetition the suite runs. By default (and in CI) every behaviour is proved once:
 * storage behaviour on every reachable store, everything else on one; each dashboard screen's looks
 * in two of the four (en-light and pt-dark, which together cover both languages and both themes);
 * `FUZZ_CASES_BY_DEFAULT` fuzz cases a route. Each variable widens one of these; `TEST_EVERYTHING=1`
 * widens all three (with 1,000 fuzz cases a route unless `FUZZ_RUNS` says otherwise).
 */
const everything = process.env.TEST_EVERYTHING === '1'

/** `TEST_EVERYTHING=1`: property files check ten times as many cases as by default. */
export const testEverything = everything

/** `TEST_EVERY_BACKEND=1`: files whose subject is not storage run on Postgres too. */
export const testEveryBackend = everything || process.env.TEST_EVERY_BACKEND === '1'

/** `TEST_EVERY_LOOK=1`: dashboard screens are captured and checked in all four looks. */
export const testEveryLook = everything || process.env.TEST_EVERY_LOOK === '1'

export const FUZZ_CASES_BY_DEFAULT = 100

/** `FUZZ_RUNS=N`: N fuzz cases a route, fewer or more than the default. */
export const fuzzCases = Number(process.env.FUZZ_RUNS) > 0 ? Math.floor(Number(process.env.FUZZ_RUNS)) : everything ? 1000 : FUZZ_CASES_BY_DEFAULT
