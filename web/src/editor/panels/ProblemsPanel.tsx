import { useT } from '../i18n'
import type { ProblemIndex } from '../flow/model'

/** Every problem the service reported, written for people (flow/problem-text.ts); one that concerns a node selects it. */
export function ProblemsPanel({ problems, onSelectNode }: { problems: ProblemIndex; onSelectNode(id: string): void }) {
  const t = useT()
  return (
    <div className="problems-panel" data-testid="problems-panel">
      <h2>{t('problems.title')}</h2>
      {problems.all.length === 0 && <p className="muted">{t('problems.none')}</p>}
      <ul>
        {problems.all.map(({ problem, nodeId }, i) => (
          <li key={i}>
            {nodeId !== undefined ? (
              <button type="button" className="link" onClick={() => onSelectNode(nodeId)}>
                {problem.message}
              </button>
            ) : (
              problem.message
            )}
          </li>
        ))}
      </ul>
    </div>
  )
}
