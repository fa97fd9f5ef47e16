import type { ReactNode } from 'react'
import { useT } from '../i18n'

// An HTTP answer's body as people read it: JSON pretty-printed, anything else as it came. Given
// `onPick`, each value a flow can save (and the name of each member holding one) is a button that
// picks its place as a path of the JSONPath subset a flow reads responses with
// (src/domain/json-path.ts): `$.order.status`.

type Segment = string | number

/** A member written `.name` when the path syntax allows it, else `['name']`. */
const PLAIN_MEMBER = /^[A-Za-z_][A-Za-z0-9_-]*$/

/** The path of a place in a document, as `parseJsonPath` reads it back. */
export const jsonPathOf = (segments: readonly Segment[]): string =>
  `$${segments
    .map((segment) => (typeof segment === 'number' ? `[${segment}]` : PLAIN_MEMBER.test(segment) ? `.${segment}` : `['${segment.replace(/[\\']/g, '\\$&')}']`))
    .join('')}`

/** What a flow can save from a response: one value or an object, not null nor a list (a path to one fails). */
const savable = (value: unknown): boolean => value !== null && !Array.isArray(value)

/** Past this many values the body is shown as text: a tree of buttons that long helps nobody. */
const MOST_PICKABLE = 2000

const countValues = (value: unknown, budget: { left: number }): void => {
  budget.left -= 1
  if (budget.left < 0) return
  if (Array.isArray(value)) value.forEach((item) => countValues(item, budget))
  else if (typeof value === 'object' && value !== null) Object.values(value).forEach((item) => countValues(item, budget))
}

export function JsonBody({ body, onPick, testId }: { body: string; onPick?(path: string): void; testId?: string }) {
  const t = useT()
  let document: unknown
  try {
    document = JSON.parse(body)
  } catch {
    return (
      <pre className="json-body" data-testid={testId}>
        {body}
      </pre>
    )
  }
  const budget = { left: MOST_PICKABLE }
  countValues(document, budget)
  if (!onPick || budget.left < 0) {
    return (
      <pre className="json-body" data-testid={testId}>
        {JSON.stringify(document, null, 2)}
      </pre>
    )
  }

  const pick = (text: string, at: Segment[], className: string): ReactNode => {
    const path = jsonPathOf(at)
    return (
      <button type="button" className={`json-pick ${className}`} title={path} data-path={path} onClick={() => onPick(path)}>
        {text}
        <span className="sr-only"> {t('json.use', { path })}</span>
      </button>
    )
  }
  const draw = (value: unknown, at: Segment[], indent: string): ReactNode => {
    if (Array.isArray(value)) {
      if (value.length === 0) return '[]'
      return (
        <>
          {'[\n'}
          {value.map((item, i) => (
            <span key={i}>
              {`${indent}  `}
              {draw(item, [...at, i], `${indent}  `)}
              {i < value.length - 1 ? ',\n' : '\n'}
            </span>
          ))}
          {`${indent}]`}
        </>
      )
    }
    if (typeof value === 'object' && value !== null) {
      const entries = Object.entries(value)
      if (entries.length === 0) return '{}'
      return (
        <>
          {'{\n'}
          {entries.map(([key, item], i) => (
            <span key={key}>
              {`${indent}  `}
              {savable(item) ? pick(JSON.stringify(key), [...at, key], 'json-key') : JSON.stringify(key)}
              {': '}
              {draw(item, [...at, key], `${indent}  `)}
              {i < entries.length - 1 ? ',\n' : '\n'}
            </span>
          ))}
          {`${indent}}`}
        </>
      )
    }
    return savable(value) ? pick(JSON.stringify(value), at, `json-${typeof value}`) : JSON.stringify(value)
  }
  return (
    <pre className="json-body pickable" data-testid={testId}>
      {draw(document, [], '')}
    </pre>
  )
}
