// tap 21 reads a subtest's results back from the TAP text it printed, and its parser breaks lines
// at U+2028 and U+2029 too: once a message (or a comment) holds one, every later assertion of the
// subtest is lost and the subtest passes with "no tests found", failures included
// (test/meta/line-separator-messages.test.ts shows it). Text a test did not write itself, a
// response body, a child's output, a generated counterexample, goes through here first.

const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g
const UNSAFE_BUT_LINE_BREAKS = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g
const SHORT_ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' }

const escape = (character: string) => SHORT_ESCAPES[character] ?? `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`

export interface AssertionMessageOptions {
  /** Characters of the text kept; the rest is left out and counted. */
  maxLength?: number
  /** Keep `\n` as it is: for `t.comment`, which prints each line of its text as a comment line. */
  keepLineBreaks?: boolean
}

/**
 * `value` as text tap reports faithfully: a string as it is, an error by its message, anything
 * else as JSON; line and paragraph separators, control characters and lone surrogates escaped
 * (`\n`, `\u2028`), and cut to `maxLength` characters.
 */
export function assertionMessage(value: unknown, { maxLength = 1000, keepLineBreaks = false }: AssertionMessageOptions = {}): string {
  const text = typeof value === 'string' ? value : value instanceof Error ? value.message : (JSON.stringify(value) ?? String(value))
  let kept = text.length > maxLength ? text.slice(0, maxLength) : text
  // Never cut a surrogate pair in two.
  if (kept.length < text.length && /[\ud800-\udbff]$/.test(kept)) kept = kept.slice(0, -1)
  const escaped = kept.replace(keepLineBreaks ? UNSAFE_BUT_LINE_BREAKS : UNSAFE, escape)
  return kept.length < text.length ? `${escaped}… (${text.length - kept.length} more characters)` : escaped
}
