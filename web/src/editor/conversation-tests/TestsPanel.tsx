import { useEffect, useRef, useState } from 'react'
import { errorText } from '../../shared/api-problems'
import type { ConversationTest } from '../api'
import { Confirm } from '../dialogs/Confirm'
import { useT } from '../i18n'
import { expectationOf, stepTitle, stoppedText, type TestResult } from './expectations'
import { ProblemDiff } from './ProblemDiff'
import type { ConversationTests, Outcome } from './useConversationTests'
import './conversation-tests.css'

export interface TestsPanelProps {
  tests: ConversationTests
  /** The draft's JSON now: results of another draft are marked as such. */
  draft: string
  nodeName(id: string): string
  /** The draft's `settings.requirePassingTests`: a publish runs these tests first and stops on a failure. */
  requirePassing: boolean
  onRequirePassing(on: boolean): void
}

/**
 * The flow's conversation tests: run them all or one against the draft, see what failed where (or
 * that a refused publish found it failing), delete one; and whether a publish needs them to pass.
 */
export function TestsPanel({ tests, draft, nodeName, requirePassing, onRequirePassing }: TestsPanelProps) {
  const t = useT()
  const { list, failure, results, running, runFailure, load } = tests
  const heading = useRef<HTMLHeadingElement>(null)

  useEffect(() => {
    void load()
  }, [load])

  const outcomes = list?.flatMap((test) => results?.byId.get(test.id) ?? []) ?? []
  const ran = outcomes.filter((outcome) => !outcome.refusedPublish)
  const refused = outcomes.length - ran.length
  return (
    <div className="tests-panel" data-testid="tests-panel">
      <h2 ref={heading} tabIndex={-1}>
        {t('tests.title')}
      </h2>
      <p className="hint">{t('tests.hint')}</p>
      <label className="check publish-gate">
        <input type="checkbox" checked={requirePassing} onChange={(e) => onRequirePassing(e.target.checked)} aria-describedby="publish-gate-hint" data-testid="require-passing-tests" />
        {t('tests.requirePassing')}
      </label>
      <p className="hint" id="publish-gate-hint">
        {t('tests.requirePassingHint')}
      </p>
      {failure !== undefined && (
        <p className="field-error" role="alert">
          {t('tests.loadFailed', { message: errorText(failure, t) })}
        </p>
      )}
      {!list && failure === undefined && <p className="muted">{t('tests.loading')}</p>}
      {list?.length === 0 && <p className="muted">{t('tests.empty')}</p>}
      {list && list.length > 0 && (
        <div className="tests-run-all">
          <button type="button" className="primary" onClick={() => void tests.run()} disabled={running !== undefined} data-testid="tests-run-all">
            ▷ {running === 'all' ? t('tests.running') : t('tests.runAll')}
          </button>
          <span role="status" data-testid="tests-summary">
            {ran.length > 0 && t('tests.summary', { passed: ran.filter((result) => result.passed).length, count: ran.length })}
          </span>
        </div>
      )}
      {runFailure !== undefined && (
        <p className="field-error" role="alert">
          {t('tests.runFailed', { message: errorText(runFailure, t) })}
        </p>
      )}
      {refused > 0 && (
        <p className="tests-notice error" data-testid="tests-refused">
          {t('tests.refused', { count: refused })}
        </p>
      )}
      {results?.unsaved && <p className="tests-notice error">{t('tests.saveFailed')}</p>}
      {results && results.draft !== draft && (
        <p className="tests-notice" data-testid="tests-stale">
          {t('tests.stale')}
        </p>
      )}
      <ul className="conversation-tests">
        {list?.map((test) => (
          <TestItem key={test.id} test={test} result={results?.byId.get(test.id)} tests={tests} nodeName={nodeName} onDeleted={() => heading.current?.focus()} />
        ))}
      </ul>
    </div>
  )
}

function TestItem({ test, result, tests, nodeName, onDeleted }: { test: ConversationTest; result: Outcome | undefined; tests: ConversationTests; nodeName(id: string): string; onDeleted(): void }) {
  const t = useT()
  const [asking, setAsking] = useState(false)
  const [deleting, setDeleting] = useState(false)
  const [refusal, setRefusal] = useState<string>()
  const deleteButton = useRef<HTMLButtonElement>(null)
  const state = result === undefined ? 'not-run' : result.passed ? 'passed' : 'failed'

  const remove = async () => {
    setDeleting(true)
    setRefusal(undefined)
    try {
      await tests.remove(test.id)
      onDeleted()
    } catch (error) {
      setRefusal(t('tests.deleteFailed', { message: errorText(error, t) }))
      setDeleting(false)
    }
  }
  const cancel = () => {
    setAsking(false)
    requestAnimationFrame(() => deleteButton.current?.focus())
  }

  return (
    <li className={`conversation-test ${state}`} data-testid="conversation-test" data-name={test.name}>
      <div className="conversation-test-line">
        <span className={`test-state ${state}`} data-testid="test-state">
          <span aria-hidden>{state === 'passed' ? '✓' : state === 'failed' ? '✗' : '○'}</span> {t(state === 'passed' ? 'tests.passed' : state === 'failed' ? 'tests.failed' : 'tests.notRun')}
        </span>
        <strong className="conversation-test-name">{test.name}</strong>
        <span className="conversation-test-actions">
          <button type="button" className="secondary" aria-label={t('tests.runNamed', { name: test.name })} onClick={() => void tests.run(test.id)} disabled={tests.running !== undefined}>
            {tests.running === test.id ? t('tests.running') : t('tests.run')}
          </button>
          <button type="button" className="danger" ref={deleteButton} aria-label={t('tests.deleteNamed', { name: test.name })} onClick={() => setAsking(true)} disabled={asking || deleting}>
            {t('tests.delete')}
          </button>
        </span>
      </div>
      {asking && (
        <Confirm
          question={t('tests.confirmDelete', { name: test.name })}
          confirm={t('tests.delete')}
          confirming={t('tests.deleting')}
          busy={deleting}
          tone="danger"
          onConfirm={() => void remove()}
          onCancel={cancel}
          testId="confirm-delete"
        />
      )}
      {refusal && (
        <p className="field-error" role="alert">
          {refusal}
        </p>
      )}
      {result?.refusedPublish && (
        <p className="hint" data-testid="failed-at-publish">
          {t('tests.failedAtPublish')}
        </p>
      )}
      {result && !result.passed && !result.refusedPublish && <Failure test={test} result={result} nodeName={nodeName} />}
    </li>
  )
}

/** Where a test failed: why it stopped early, and each failing turn with what differs. */
function Failure({ test, result, nodeName }: { test: ConversationTest; result: TestResult; nodeName(id: string): string }) {
  const t = useT()
  return (
    <div className="test-failure" data-testid="test-failure">
      {result.steps
        .filter((step) => !step.passed)
        .map((step) => (
          <section key={step.step} className="failing-step" data-testid="failing-step" aria-label={stepTitle(test, step.step, t)}>
            <h3>{stepTitle(test, step.step, t)}</h3>
            {step.problems.map((problem, i) => (
              <ProblemDiff key={i} problem={problem} expect={expectationOf(test, step.step)} nodeName={nodeName} />
            ))}
          </section>
        ))}
      {result.stop && (
        <p className="field-error" data-testid="test-stopped">
          {stoppedText(result.stop, t)}
        </p>
      )}
    </div>
  )
}
