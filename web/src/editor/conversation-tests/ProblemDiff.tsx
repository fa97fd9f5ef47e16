import type { ReactNode } from 'react'
import { useT, type Translate } from '../i18n'
import { expectedAt, matchKind, matchText, placeOf, textDiff, type Expectation, type Problem, type TextMatch } from './expectations'

const isTextMatch = (value: unknown): value is TextMatch =>
  typeof value === 'object' && value !== null && ['equals', 'contains', 'pattern'].some((kind) => typeof (value as Record<string, unknown>)[kind] === 'string')

/** A text as it is, its blanks and line breaks kept; an empty one said so. */
function Words({ children, t }: { children: ReactNode; t: Translate }) {
  return <span className="diff-words">{children === '' ? <span className="muted">{t('tests.emptyText')}</span> : children}</span>
}

/** A text check as the test wrote it: its kind, then its words. */
function Check({ match, t, marked }: { match: TextMatch; t: Translate; marked?: ReactNode }) {
  return (
    <>
      <span className="diff-kind">{t(`tests.match.${matchKind(match)}`)}</span>
      <Words t={t}>{marked ?? matchText(match)}</Words>
    </>
  )
}

/** Any other value of a test or a turn, in words where the editor knows them. */
function Value({ value, at, t, nodeName }: { value: unknown; at: string; t: Translate; nodeName(id: string): string }): ReactNode {
  if (isTextMatch(value)) return <Check match={value} t={t} />
  if (value === null || value === undefined) return <span className="muted">{at === 'waitsAt' ? t('tests.nowhere') : t('tests.unset')}</span>
  if (typeof value === 'boolean') return t(value ? 'tests.yes' : 'tests.no')
  if (typeof value === 'string') {
    if (at === 'waitsAt' || at === 'visits') return nodeName(value)
    if (at === 'status' && ['active', 'completed', 'error'].includes(value)) return t(`tests.status.${value as 'active' | 'completed' | 'error'}`)
    return <Words t={t}>{value}</Words>
  }
  if (Array.isArray(value) && at === 'visits') return value.map((id) => nodeName(String(id))).join(' → ')
  if (Array.isArray(value) && at === 'messages') {
    return (
      <>
        <span className="diff-kind">{t('tests.messages', { count: value.length })}</span>
        <ol className="diff-messages">
          {value.map((item, i) => (
            <li key={i}>{typeof item === 'string' ? <Words t={t}>{item}</Words> : isTextMatch(item?.text) ? <Check match={item.text} t={t} /> : <span className="muted">{t('tests.noWords')}</span>}</li>
          ))}
        </ol>
      </>
    )
  }
  return <code className="diff-words">{JSON.stringify(value)}</code>
}

export interface ProblemDiffProps {
  problem: Problem
  /** What the test expects of the turn, to show a check as it was written. */
  expect: Expectation | undefined
  nodeName(id: string): string
}

/**
 * One way a turn differs from what its test expects: where, then what was expected and what came,
 * side by side; of two texts that should be equal, the words that differ are marked.
 */
export function ProblemDiff({ problem, expect, nodeName }: ProblemDiffProps) {
  const t = useT()
  const written = expectedAt(expect, problem.at)
  const expected = written.found ? written.value : problem.expected
  const { actual, at } = problem
  let sides: { expected: ReactNode; actual: ReactNode }
  if (isTextMatch(expected) && 'equals' in expected && typeof actual === 'string') {
    const diff = textDiff(expected.equals, actual)
    sides = {
      expected: <Check match={expected} t={t} marked={diff.expected || diff.actual ? [diff.before, <del key="d">{diff.expected}</del>, diff.after] : undefined} />,
      actual: <Words t={t}>{actual === '' ? '' : [diff.before, <ins key="i">{diff.actual}</ins>, diff.after]}</Words>,
    }
  } else {
    sides = { expected: <Value value={expected} at={at} t={t} nodeName={nodeName} />, actual: <Value value={actual} at={at} t={t} nodeName={nodeName} /> }
  }
  return (
    <div className="problem-diff" data-testid="problem-diff">
      <p className="problem-place">
        {placeOf(at, t)} <code>{at}</code>
      </p>
      <dl className="diff-sides">
        <div className="diff-expected">
          <dt>{t('tests.expected')}</dt>
          <dd data-testid="diff-expected">{sides.expected}</dd>
        </div>
        <div className="diff-actual">
          <dt>{t('tests.actual')}</dt>
          <dd data-testid="diff-actual">{sides.actual}</dd>
        </div>
      </dl>
    </div>
  )
}
