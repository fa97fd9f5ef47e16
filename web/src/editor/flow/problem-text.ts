import type { MessageKey, Translate } from '../i18n'
import type { ProblemIndex } from './model'
import type { FlowDefinition, Problem } from '../flow-definition'

type Segment = string | number

/** `nodes[2].data.values["a b"]` → ['nodes', 2, 'data', 'values', 'a b']. */
export function pathSegments(path: string): Segment[] {
  const segments: Segment[] = []
  const part = /\.?([A-Za-z_$][A-Za-z0-9_$]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/gy
  for (let match = part.exec(path); match; match = part.exec(path)) {
    if (match[1] !== undefined) segments.push(match[1])
    else if (match[2] !== undefined) segments.push(Number(match[2]))
    else segments.push(JSON.parse(match[3]!) as string)
  }
  return segments
}

/** Lists whose items a person sees numbered in the forms: the item's name, and its name after "of". */
const ITEMS: Record<string, { one: MessageKey; of: MessageKey }> = {
  messages: { one: 'where.message', of: 'where.ofMessage' },
  buttons: { one: 'where.button', of: 'where.ofButton' },
  sections: { one: 'where.section', of: 'where.ofSection' },
  rows: { one: 'where.row', of: 'where.ofRow' },
  rules: { one: 'where.rule', of: 'where.ofRule' },
}

/** The fields a person fills, by the name the format gives them. */
const FIELDS: Record<string, MessageKey> = {
  title: 'field.title',
  body: 'field.text',
  text: 'field.text',
  caption: 'field.caption',
  url: 'field.url',
  link: 'field.url',
  display_text: 'field.label',
  button: 'field.label',
  id: 'field.id',
  variable: 'field.variable',
  value: 'field.value',
  saveAs: 'field.saveAs',
  targetId: 'field.target',
  pipelineId: 'field.pipeline',
  stageId: 'field.stage',
  target: 'field.targetNode',
  source: 'field.sourceNode',
  sourceHandle: 'field.exit',
  maxRetries: 'field.maxRetries',
  operator: 'field.operator',
  type: 'field.type',
  name: 'field.name',
}

/** The validator's messages (src/domain/validate-flow.ts) the editor says in the person's language; any other is shown as it came. */
const MESSAGES: { pattern: RegExp; key: MessageKey; params?: string[] }[] = [
  { pattern: /^is required$/, key: 'what.required' },
  { pattern: /^must not be empty$/, key: 'what.empty' },
  { pattern: /^longer than (\d+) characters$/, key: 'what.tooLong', params: ['limit'] },
  { pattern: /^shorter than (\d+) characters$/, key: 'what.tooShort', params: ['limit'] },
  { pattern: /^no node "(.*)"$/, key: 'what.noNode', params: ['id'] },
  { pattern: /^unknown variable "(.*)"$/, key: 'what.unknownVariable', params: ['name'] },
  { pattern: /^no variable "(.*)" in this workspace$/, key: 'what.noVariable', params: ['name'] },
  { pattern: /^"(.*)" is a system variable/, key: 'what.systemVariable', params: ['name'] },
  { pattern: /^variable "(.*)" holds /, key: 'what.variableType', params: ['name'] },
  { pattern: /^no sector ".*" in this workspace$/, key: 'what.noSector' },
  { pattern: /^no pipeline ".*" in this workspace$/, key: 'what.noPipeline' },
  { pattern: /^pipeline ".*" has no stage ".*"$/, key: 'what.noStage' },
  { pattern: /^unreachable from the start node$/, key: 'what.unreachable' },
  { pattern: /^no start node/, key: 'what.noStart' },
  { pattern: /^a second start node/, key: 'what.secondStart' },
  { pattern: /^duplicate (?:node |edge )?id "(.*?)"/, key: 'what.duplicateId', params: ['id'] },
  { pattern: /^more than (\d+) buttons/, key: 'what.tooManyButtons', params: ['max'] },
  { pattern: /^more than (\d+) sections/, key: 'what.tooManySections', params: ['max'] },
  { pattern: /^more than (\d+) rows in total/, key: 'what.tooManyRows', params: ['max'] },
  { pattern: /^a second edge from the same exit/, key: 'what.exitTaken' },
  { pattern: /^not a valid regular expression/, key: 'what.badRegex' },
  { pattern: /^a choice question's prompt must be/, key: 'what.choicePrompt' },
  { pattern: /^is not a property of the flow format$/, key: 'what.unknownProperty' },
  { pattern: /^unknown node type "(.*)"/, key: 'what.unknownType', params: ['type'] },
]

const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1)

/** Where a problem is, as the person sees it: "Button 1 of node Welcome", "Connection from node a to node b". */
function where(definition: FlowDefinition, segments: Segment[], t: Translate): { place: string; rest: Segment[] } {
  const [list, index] = segments
  if (list === 'nodes' && typeof index === 'number') {
    const node = definition.nodes[index]
    const nodeName = node?.id ?? String(index + 1)
    const rest = segments.slice(2)
    // The items the path goes through, outermost first ("Section 1", then "Row 2").
    const items: { list: string; number: number; at: number }[] = []
    rest.forEach((segment, at) => {
      const next = rest[at + 1]
      if (typeof segment === 'string' && ITEMS[segment] && typeof next === 'number') items.push({ list: segment, number: next + 1, at })
    })
    const innermost = items.at(-1)
    if (!innermost) return { place: t('where.node', { id: nodeName }), rest }
    const outer = [...items.slice(0, -1)].reverse().map((item) => t(ITEMS[item.list]!.of, { n: item.number }))
    const place = [t(ITEMS[innermost.list]!.one, { n: innermost.number }), ...outer, t('where.ofNode', { id: nodeName })].join(' ')
    return { place, rest: rest.slice(innermost.at + 2) }
  }
  if (list === 'edges' && typeof index === 'number') {
    const edge = definition.edges[index]
    const place = edge ? t('where.edge', { source: edge.source, target: edge.target }) : t('where.edgeNumber', { n: index + 1 })
    return { place, rest: segments.slice(2) }
  }
  return { place: t('where.flow'), rest: segments.slice(1) }
}

/** The field a problem is about, when the form names it: the last named segment of what is left of the path. */
function field(rest: Segment[], t: Translate): string | undefined {
  const named = rest.filter((segment): segment is string => typeof segment === 'string' && segment !== 'data')
  const last = named.at(-1)
  if (last === undefined) return undefined
  if (named.at(-2) === 'values') return t('field.cardField', { name: last })
  const key = FIELDS[last]
  return key ? t(key) : last
}

/** What is wrong, in the person's language when the editor knows the validator's words. */
function what(message: string, t: Translate): string {
  for (const { pattern, key, params = [] } of MESSAGES) {
    const match = pattern.exec(message)
    if (match) return t(key, Object.fromEntries(params.map((name, i) => [name, match[i + 1] ?? ''])))
  }
  return message
}

/**
 * A problem the service reported, written for a person: "Button 1 of node Welcome: title longer
 * than 20 characters", never `nodes[2].data.prompt.interactive.action.buttons[0].title`.
 */
export function problemText(definition: FlowDefinition, problem: Problem, t: Translate): string {
  const segments = pathSegments(problem.path)
  const { place, rest } = where(definition, segments, t)
  const about = field(rest, t)
  const wrong = what(problem.message, t)
  return `${capitalize(place)}: ${about ? `${about} ${wrong}` : capitalize(wrong)}`
}

/** The problems with their messages written for a person (the path stays, for finding the node). */
export const forPeople = (definition: FlowDefinition, problems: readonly Problem[], t: Translate): Problem[] =>
  problems.map((problem) => ({ path: problem.path, message: problemText(definition, problem, t) }))

/** The problems without those of one node: a node just edited no longer shows what was said of it before. */
export function withoutNode(index: ProblemIndex, nodeId: string): ProblemIndex {
  if (!index.byNode.has(nodeId)) return index
  const byNode = new Map(index.byNode)
  byNode.delete(nodeId)
  return { byNode, byEdge: index.byEdge, all: index.all.filter((entry) => entry.nodeId !== nodeId) }
}
