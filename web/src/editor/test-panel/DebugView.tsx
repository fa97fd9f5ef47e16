import type { VariableValue } from '../api'
import { CallView } from '../forms/CallView'
import { AiExchange, completionOf } from '../nodes/ai-exchange'
import { aiStrings } from '../nodes/ai-strings'
import { useT } from '../i18n'
import { useWorkspace } from '../workspace'
import type { Conversation, TurnCall, TurnDebug } from './conversation'

/** Names a node, and an exit of a node, as the canvas does. */
export interface Naming {
  nodeName(id: string): string
  /** The node's type in the draft; undefined for a node it no longer has. */
  nodeType(id: string): string | undefined
  exitName(nodeId: string, exit: string): string
}

/**
 * The exit of its node a call led to: `error` for no answer or a status outside 2xx, else `success`
 * unless its turn warned that the node failed on it (a path of its mappings matched nothing); not
 * known before its turn is.
 */
function exitOf(call: TurnCall, turn: TurnDebug | undefined): 'success' | 'error' | undefined {
  const { answer, request, nodeId } = call
  if ('error' in answer || answer.status < 200 || answer.status > 299) return 'error'
  if (!turn) return undefined
  const failed = turn.warnings.some((warning) => warning.startsWith(`httpRequest ${nodeId}: `) && warning.includes(`${request.method} ${request.url}`))
  return failed ? 'error' : 'success'
}

const show = (value: VariableValue) => (typeof value === 'string' ? value : JSON.stringify(value))

/**
 * What the engine did: the variables now (the last turn's changes marked) and each turn, newest
 * first, with the calls it made; calls of a turn not completed yet come first.
 */
export function DebugView({ conversation, naming }: { conversation: Conversation; naming: Naming }) {
  const t = useT()
  const names = Object.keys(conversation.variables).sort()
  const changed = new Set(conversation.changed)
  const turnIds = new Set(conversation.turns.map((turn) => turn.messageId))
  const callsOf = (messageId: string) => conversation.calls.filter((call) => call.messageId === messageId)
  const pending = conversation.calls.filter((call) => !turnIds.has(call.messageId))
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
      {conversation.turns.length === 0 && pending.length === 0 && <p className="hint">{t('test.debug.noTurns')}</p>}
      {pending.length > 0 && (
        <section className="test-turn" data-testid="test-turn-pending">
          <h4>{t('test.debug.inProgress')}</h4>
          <Calls calls={pending} turn={undefined} naming={naming} />
        </section>
      )}
      <ol className="test-turns" reversed>
        {conversation.turns
          .map((turn, index) => ({ turn, index }))
          .reverse()
          .map(({ turn, index }) => (
            <Turn key={`${index}-${turn.messageId}`} turn={turn} index={index} calls={callsOf(turn.messageId)} naming={naming} />
          ))}
      </ol>
    </div>
  )
}

function Turn({ turn, index, calls, naming }: { turn: TurnDebug; index: number; calls: TurnCall[]; naming: Naming }) {
  const t = useT()
  const { nodeName } = naming
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
      <Calls calls={calls} turn={turn} naming={naming} />
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

/**
 * The calls of a turn, each as sent and answered, with the exit it led to once the turn is known;
 * an AI step's with its prompt by role, the model's text and the tokens it took above.
 */
function Calls({ calls, turn, naming }: { calls: TurnCall[]; turn: TurnDebug | undefined; naming: Naming }) {
  const t = useT()
  const ai = aiStrings.useT()
  if (calls.length === 0) return null
  return (
    <ul className="test-calls" aria-label={t('test.debug.calls')}>
      {calls.map((call) => {
        // An AI step's exit is the label the model chose, or success: its turn's path tells which.
        const completion = naming.nodeType(call.nodeId) === 'ai' ? completionOf(call.answer) : undefined
        const exit = completion ? undefined : exitOf(call, turn)
        return (
          <li key={`${call.messageId}-${call.index}`} data-testid="test-call">
            <p className="test-call-node">
              <span className="test-meta">{t('test.debug.callOf', { node: naming.nodeName(call.nodeId) })}</span>
            </p>
            <CallView
              call={call}
              outcome={
                <>
                  {completion && (
                    <span className="muted" data-testid="test-call-tokens">
                      {' '}
                      · {ai('ai.tokens', { prompt: completion.usage.promptTokens, completion: completion.usage.completionTokens })}
                    </span>
                  )}
                  {exit && (
                    <span className={`test-call-exit ${exit}`} data-testid="test-call-exit">
                      {' '}
                      · {t('test.debug.exit', { exit: naming.exitName(call.nodeId, exit) })}
                    </span>
                  )}
                </>
              }
            >
              {completion && <AiExchange requestBody={call.request.body} completion={completion} />}
            </CallView>
          </li>
        )
      })}
    </ul>
  )
}
