import type { VariableValue } from '../api'
import { useT } from '../i18n'
import { useWorkspace } from '../workspace'
import type { Conversation, TurnDebug } from './conversation'

const show = (value: VariableValue) => (typeof value === 'string' ? value : JSON.stringify(value))

/** What the engine did: the variables now (the last turn's changes marked) and each turn, newest first. */
export function DebugView({ conversation, nodeName }: { conversation: Conversation; nodeName(id: string): string }) {
  const t = useT()
  const names = Object.keys(conversation.variables).sort()
  const changed = new Set(conversation.changed)
  return (
    <div className="test-debug" data-testid="test-debug">
      <h3>{t('test.debug.variables')}</h3>
      <table className="test-vars">
        <tbody>
          {names.map((name) => (
            <tr key={name} className={changed.has(name) ? 'changed' : undefined} data-testid={`test-var-${name}`}>
              <th scope="row">
                <code>{name}</code>
              </th>
              <td>
                <code>{show(conversation.variables[name]!)}</code>
                {changed.has(name) && <span className="badge test-changed">{t('test.debug.changed')}</span>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <h3>{t('test.debug.turns')}</h3>
      {conversation.turns.length === 0 && <p className="hint">{t('test.debug.noTurns')}</p>}
      <ol className="test-turns" reversed>
        {conversation.turns
          .map((turn, index) => ({ turn, index }))
          .reverse()
          .map(({ turn, index }) => (
            <Turn key={`${index}-${turn.messageId}`} turn={turn} index={index} nodeName={nodeName} />
          ))}
      </ol>
    </div>
  )
}

function Turn({ turn, index, nodeName }: { turn: TurnDebug; index: number; nodeName(id: string): string }) {
  const t = useT()
  const { sectors, pipelines } = useWorkspace()
  const stageName = (pipelineId: string, stageId: string) => {
    const pipeline = pipelines.find((p) => p.id === pipelineId)
    const stage = pipeline?.stages.find((s) => s.id === stageId)
    return pipeline && stage ? `${pipeline.name} → ${stage.name}` : stageId
  }
  const targetName = (targetType: 'sector' | 'agent', targetId: string) =>
    (targetType === 'sector' && sectors.find((s) => s.id === targetId)?.name) || targetId
  return (
    <li className="test-turn" data-testid="test-turn">
      <h4>{index === 0 ? t('test.debug.start') : t('test.debug.turn', { n: index })}</h4>
      <p className="test-path">
        <span className="test-meta">{t('test.debug.path')}:</span>{' '}
        {turn.path.map((id, i) => (
          <span key={i}>
            {i > 0 && <span aria-hidden="true"> → </span>}
            <span className="test-path-node" title={id}>
              {nodeName(id)}
            </span>
          </span>
        ))}
      </p>
      <ul className="test-events">
        {turn.warnings.map((warning, i) => (
          <li key={`w${i}`} className="warn">
            ⚠ {t('test.debug.warning', { warning })}
          </li>
        ))}
        {turn.functions.map((fn, i) => (
          <li key={`f${i}`}>
            {fn.type === 'transfer'
              ? `⇄ ${t('test.debug.transfer', { target: t(`test.target.${fn.targetType}`), id: targetName(fn.targetType, fn.targetId) })}`
              : `■ ${t('test.debug.finish')}`}
          </li>
        ))}
        {turn.kanban.map((action, i) => (
          <li key={`k${i}`}>
            ▦ {t(action.action === 'create' ? 'test.debug.cardCreated' : 'test.debug.cardMoved', { stage: stageName(action.pipelineId, action.stageId) })}
          </li>
        ))}
      </ul>
    </li>
  )
}
