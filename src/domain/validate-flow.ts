import { SECRET_NAME_PATTERN } from './secret.js'
import type { TSchema } from '@sinclair/typebox'
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler'
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors'
import { Value } from '@sinclair/typebox/value'
import { Tag } from './card.js'
import { FlowDefinition, VariableName } from './flow-definition.js'
import { LIMITS } from './message-limits.js'
// Registers the `uuid` format that the node schemas use.
import './schemas.js'
import { SYSTEM_VARIABLES } from './variables.js'
import { BadRequestError } from '../errors.js'
import { nodeTypeOf, nodeTypes, type NodeTypes } from './nodes/index.js'
import type { CheckContext, Exit, NodeType, Segment, WorkspaceCatalog } from './nodes/node-type.js'

export { SYSTEM_VARIABLES }
export { DEFAULT_HANDLE, INVALID_HANDLE, type WorkspaceCatalog } from './nodes/node-type.js'

/** One thing wrong with a definition. `path` points into it (`nodes[3].data.saveAs`); '' is the whole document. */
export interface Problem {
  path: string
  message: string
}

/** A 400 that lists every problem of a definition; `message` joins them. */
export class InvalidFlowError extends BadRequestError {
  readonly problems: readonly Problem[]

  constructor(problems: readonly Problem[]) {
    super(problems.map(formatProblem).join('; '))
    this.problems = problems
  }
}

export const formatProblem = (problem: Problem): string => (problem.path ? `${problem.path}: ${problem.message}` : problem.message)

/** Throws {@link InvalidFlowError} unless the definition is valid in the workspace. */
export function assertValidFlow(definition: unknown, catalog: WorkspaceCatalog, types: NodeTypes = nodeTypes): asserts definition is FlowDefinition {
  const problems = validateFlow(definition, catalog, types)
  if (problems.length > 0) throw new InvalidFlowError(problems)
}

type Report = (at: readonly Segment[], message: string) => void

const structure = TypeCompiler.Compile(FlowDefinition)
const compiledSchemas = new WeakMap<TSchema, TypeCheck<TSchema>>()
const compiled = (schema: TSchema): TypeCheck<TSchema> => {
  const known = compiledSchemas.get(schema)
  if (known) return known
  const check = TypeCompiler.Compile(schema)
  compiledSchemas.set(schema, check)
  return check
}

interface NodeInfo {
  index: number
  id: string
  type: string | undefined
  data: Record<string, unknown> | undefined
  /** The registry's type of the node, when it has one. */
  nodeType: NodeType | undefined
  /** Whether its `data` matched its type's schema. */
  dataMatches: boolean
}

interface EdgeInfo {
  index: number
  id: unknown
  source: unknown
  target: unknown
  sourceHandle: unknown
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)
const field = (value: unknown, key: string): unknown => (isRecord(value) ? value[key] : undefined)
const items = (value: unknown): unknown[] => (Array.isArray(value) ? value : [])
const length = (text: string) => [...text].length
const commaList = (items: readonly string[]) => items.join(', ')

/**
 * Checks a flow definition against the document format and the workspace it belongs to, and
 * returns every problem found (none when it is valid). Pure: the workspace arrives as `catalog`.
 */
export function validateFlow(definition: unknown, catalog: WorkspaceCatalog, types: NodeTypes = nodeTypes): Problem[] {
  const problems: Problem[] = []
  const seen = new Set<string>()
  const report: Report = (at, message) => {
    const problem = { path: formatPath(at), message }
    const key = `${problem.path}\u0000${message}`
    if (seen.has(key)) return
    seen.add(key)
    problems.push(problem)
  }

  if (!isRecord(definition)) {
    report([], 'the definition must be a JSON object')
    return problems
  }
  reportSchemaErrors(structure.Errors(definition), [], report)
  // Every other rule is about nodes; without a list of them there is nothing more to say.
  if (!Array.isArray(definition.nodes)) return problems

  const nodes = definition.nodes.flatMap((raw, index): NodeInfo[] =>
    isRecord(raw) && typeof raw.id === 'string'
      ? [{ index, id: raw.id, ...typed(raw.type, types), data: isRecord(raw.data) ? raw.data : undefined, dataMatches: false }]
      : [],
  )
  const edges = (Array.isArray(definition.edges) ? definition.edges : []).flatMap((raw, index): EdgeInfo[] =>
    isRecord(raw) ? [{ index, id: raw.id, source: raw.source, target: raw.target, sourceHandle: raw.sourceHandle }] : [],
  )

  for (const node of nodes) checkNodeData(node, types, report)
  const known = knownVariables(nodes, catalog)
  for (const node of nodes) {
    if (node.data) checkMessages(node, report)
    if (node.data) checkVariableReferences(node, known, report)
    if (node.dataMatches && node.data) checkNode(node, node.data, catalog, known, report)
  }
  const byId = checkNodeIds(nodes, report)
  checkEdges(edges, byId, report)
  checkReachability(nodes, edges, byId, report)
  // Last, on an otherwise valid document: what the format does not name is refused, because a
  // saved definition is an event and events keep only what their schema names.
  if (problems.length === 0) reportUnknownProperties(definition, Value.Clean(FlowDefinition, Value.Clone(definition)), [], report)
  return problems
}

/** Reports each property of `given` that cleaning against the format removed. */
function reportUnknownProperties(given: unknown, kept: unknown, at: readonly Segment[], report: Report): void {
  if (Array.isArray(given) && Array.isArray(kept)) {
    given.forEach((item, index) => reportUnknownProperties(item, kept[index], [...at, index], report))
    return
  }
  if (!isRecord(given) || !isRecord(kept)) return
  for (const key of Object.keys(given)) {
    if (Object.hasOwn(kept, key)) reportUnknownProperties(given[key], kept[key], [...at, key], report)
    else report([...at, key], 'is not a property of the flow format')
  }
}

// ---------------------------------------------------------------------------------------------
// Schema errors → problems

function formatPath(at: readonly Segment[]): string {
  return at.reduce<string>((path, segment) => {
    if (typeof segment === 'number') return `${path}[${segment}]`
    if (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(segment)) return path ? `${path}.${segment}` : segment
    return `${path}[${JSON.stringify(segment)}]`
  }, '')
}

/** `/nodes/3/data/x` → ['nodes', 3, 'data', 'x']. */
const fromPointer = (pointer: string): Segment[] =>
  pointer
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((part) => (/^(0|[1-9]\d*)$/.test(part) ? Number(part) : part))

const literalOf = (schema: TSchema, key: string): unknown => (isRecord(schema.properties) && isRecord(schema.properties[key]) ? schema.properties[key].const : undefined)

const alternatives = (names: string[]) => (names.length > 1 ? `${names.slice(0, -1).join(', ')} or ${names.at(-1)}` : (names[0] ?? ''))

const kindName = (schema: TSchema): string => {
  if (schema.const !== undefined) return JSON.stringify(schema.const)
  if (schema.type === 'null') return 'null'
  if (schema.type === 'object') return 'an object'
  if (schema.type === 'integer') return 'an integer'
  return typeof schema.type === 'string' ? `a ${schema.type}` : 'a valid value'
}

const describe = (error: ValueError): string => {
  const schema = error.schema
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return 'is required'
    case ValueErrorType.Object:
      return 'must be an object'
    case ValueErrorType.Array:
      return 'must be an array'
    case ValueErrorType.String:
      return 'must be a string'
    case ValueErrorType.Number:
      return 'must be a number'
    case ValueErrorType.Integer:
      return 'must be an integer'
    case ValueErrorType.Boolean:
      return 'must be a boolean'
    case ValueErrorType.Literal:
      return `must be ${JSON.stringify(schema.const)}`
    case ValueErrorType.StringMinLength:
      return schema.minLength === 1 ? 'must not be empty' : `shorter than ${schema.minLength} characters`
    case ValueErrorType.StringMaxLength:
      return `longer than ${schema.maxLength} characters`
    case ValueErrorType.StringPattern:
      // An empty string is also reported as too short; the same words make it one problem.
      if (error.value === '' && Number(schema.minLength) >= 1) return 'must not be empty'
      if (schema.pattern === VariableName.pattern) return 'must be a variable name: letters, digits and _, not starting with a digit'
      if (schema.pattern === Tag.pattern) return 'must have no commas and no blanks at either end'
      return `must match ${schema.pattern}`
    case ValueErrorType.StringFormat:
      return schema.format === 'uuid' ? 'must be a UUID' : `must be a ${schema.format}`
    case ValueErrorType.ArrayMinItems:
      return schema.minItems === 1 ? 'must not be empty' : `must have at least ${schema.minItems} items`
    case ValueErrorType.ArrayMaxItems:
      return `more than ${schema.maxItems} items (${items(error.value).length})`
    case ValueErrorType.ArrayUniqueItems: {
      const written = items(error.value).map((item) => JSON.stringify(item))
      const repeated = written.find((item, i) => written.indexOf(item) < i)
      return repeated === undefined ? 'must not repeat an item' : `must not repeat an item; ${repeated} is there more than once`
    }
    case ValueErrorType.IntegerMinimum:
    case ValueErrorType.NumberMinimum:
      return `must be at least ${schema.minimum}`
    case ValueErrorType.IntegerMaximum:
    case ValueErrorType.NumberMaximum:
      return `must be at most ${schema.maximum}`
    default:
      return error.message.charAt(0).toLowerCase() + error.message.slice(1)
  }
}

/**
 * Turns TypeBox errors into problems. A union whose variants are told apart by a literal `type`
 * (outgoing messages, interactive shapes) is explained by the variant the value names, so a long
 * button title is reported at the title rather than as "no variant matched".
 */
function reportSchemaErrors(errors: Iterable<ValueError>, base: readonly Segment[], report: Report, missing = new Set<string>()): void {
  for (const error of errors) {
    const at = [...base, ...fromPointer(error.path)]
    // A missing property is also checked as `undefined`; "is required" says all there is to say.
    if ([...missing].some((path) => error.path === path || error.path.startsWith(`${path}/`))) continue
    if (error.type === ValueErrorType.ObjectRequiredProperty) missing.add(error.path)
    if (error.type !== ValueErrorType.Union) {
      report(at, describe(error))
      continue
    }
    const variants: TSchema[] = Array.isArray(error.schema.anyOf) ? error.schema.anyOf : []
    const tags = variants.map((variant) => literalOf(variant, 'type'))
    if (!tags.every((tag): tag is string => typeof tag === 'string')) {
      report(at, `must be ${alternatives(variants.map(kindName))}`)
      continue
    }
    if (!isRecord(error.value)) {
      report(at, 'must be an object')
      continue
    }
    const chosen = typeof error.value.type === 'string' ? tags.indexOf(error.value.type) : -1
    const nested = error.errors[chosen]
    if (chosen >= 0 && nested) {
      // The variant's errors carry full paths from the root of the checked value.
      reportSchemaErrors(nested, base, report, missing)
    } else {
      report([...at, 'type'], `must be one of ${commaList(tags)}`)
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Nodes

const typed = (type: unknown, types: NodeTypes): Pick<NodeInfo, 'type' | 'nodeType'> =>
  typeof type === 'string' ? { type, nodeType: nodeTypeOf(types, type) } : { type: undefined, nodeType: undefined }

function checkNodeData(node: NodeInfo, types: NodeTypes, report: Report): void {
  const at = ['nodes', node.index]
  if (node.type === undefined || node.type === '' || !node.data) return
  if (!node.nodeType) {
    report([...at, 'type'], `unknown node type "${node.type}"; one of ${commaList(Object.keys(types))}`)
    return
  }
  const check = compiled(node.nodeType.schema)
  node.dataMatches = check.Check(node.data)
  if (!node.dataMatches) reportSchemaErrors(check.Errors(node.data), [...at, 'data'], report)
}

/** Every outgoing message a node sends, as written (valid or not), with where it sits. */
function outgoingMessages(node: NodeInfo): { value: unknown; at: Segment[] }[] {
  const sent = node.nodeType?.messages?.(node.data ?? {}) ?? []
  return sent.map(({ value, at }) => ({ value, at: ['nodes', node.index, 'data', ...at] }))
}

function checkMessages(node: NodeInfo, report: Report): void {
  for (const { value, at } of outgoingMessages(node)) checkLimits(value, at, report)
}

/**
 * Checks the channel's limits on a message as written. It reads the message defensively rather
 * than after its schema passed, so a long title is reported beside an unrelated schema problem.
 */
function checkLimits(message: unknown, at: readonly Segment[], report: Report): void {
  const atMost = (text: unknown, limit: number, where: Segment[]) => {
    if (typeof text === 'string' && length(text) > limit) report([...at, ...where], `longer than ${limit} characters`)
  }
  const type = field(message, 'type')
  if (type === 'text') return atMost(field(field(message, 'text'), 'body'), LIMITS.textBody, ['text', 'body'])
  if (type === 'media') return atMost(field(field(message, 'media'), 'caption'), LIMITS.caption, ['media', 'caption'])
  if (type !== 'interactive') return
  const interactive = field(message, 'interactive')
  const action = field(interactive, 'action')
  const where = (...path: Segment[]) => ['interactive', ...path]
  atMost(field(field(interactive, 'body'), 'text'), LIMITS.interactiveBody, where('body', 'text'))
  atMost(field(field(interactive, 'footer'), 'text'), LIMITS.footer, where('footer', 'text'))
  switch (field(interactive, 'type')) {
    case 'button': {
      const buttons = items(field(action, 'buttons'))
      if (buttons.length > LIMITS.buttons) report([...at, ...where('action', 'buttons')], `more than ${LIMITS.buttons} buttons (${buttons.length})`)
      buttons.forEach((button, i) => atMost(field(button, 'title'), LIMITS.buttonTitle, where('action', 'buttons', i, 'title')))
      return
    }
    case 'list': {
      const sections = items(field(action, 'sections'))
      atMost(field(action, 'button'), LIMITS.listButton, where('action', 'button'))
      if (sections.length > LIMITS.sections) report([...at, ...where('action', 'sections')], `more than ${LIMITS.sections} sections (${sections.length})`)
      const rows = sections.reduce<number>((sum, section) => sum + items(field(section, 'rows')).length, 0)
      if (rows > LIMITS.rows) report([...at, ...where('action', 'sections')], `more than ${LIMITS.rows} rows in total (${rows})`)
      sections.forEach((section, s) => {
        atMost(field(section, 'title'), LIMITS.sectionTitle, where('action', 'sections', s, 'title'))
        items(field(section, 'rows')).forEach((row, r) => {
          atMost(field(row, 'title'), LIMITS.rowTitle, where('action', 'sections', s, 'rows', r, 'title'))
          atMost(field(row, 'description'), LIMITS.rowDescription, where('action', 'sections', s, 'rows', r, 'description'))
        })
      })
      return
    }
    case 'cta_url':
      return atMost(field(field(action, 'parameters'), 'display_text'), LIMITS.ctaDisplayText, where('action', 'parameters', 'display_text'))
  }
}

/** The node type's own checks, with paths below the node's `data`. */
function checkNode(node: NodeInfo, data: Record<string, unknown>, catalog: WorkspaceCatalog, known: ReadonlySet<string>, report: Report): void {
  const at: Segment[] = ['nodes', node.index, 'data']
  const context: CheckContext = { catalog, known, report: (below, message) => report([...at, ...below], message) }
  node.nodeType?.check?.(data, context)
}

// ---------------------------------------------------------------------------------------------
// Variables

// The engine's placeholder syntax (src/domain/interpolate.ts): `{{name}}` or `{{name.path}}`;
// the name before the first dot is the variable.
const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)(?:\.[A-Za-z0-9_]+)*\s*\}\}/g

/** Names a template may read: workspace and system variables, and whatever this flow saves. */
function knownVariables(nodes: readonly NodeInfo[], catalog: WorkspaceCatalog): ReadonlySet<string> {
  const known = new Set<string>([...catalog.variables.keys(), ...SYSTEM_VARIABLES])
  for (const node of nodes) {
    // A target that is not a workspace variable is reported once, where it is saved, not at every read.
    const written = node.data && node.nodeType?.writes?.(node.data)
    for (const name of typeof written === 'string' ? [written] : (written ?? [])) known.add(name)
  }
  return known
}

/**
 * `{{secrets.NAME}}` reads a workspace secret where a node type lets it (an HTTP request's URL,
 * headers and body); anywhere else a secret would end up in a message, a variable or a card.
 */
const SECRET_REFERENCE = 'secrets'

function checkVariableReferences(node: NodeInfo, known: ReadonlySet<string>, report: Report): void {
  const visit = (value: unknown, at: Segment[], secretsAllowed: boolean): void => {
    if (typeof value === 'string') {
      for (const [placeholder, name] of value.matchAll(PLACEHOLDER)) {
        if (name === SECRET_REFERENCE) checkSecretReference(placeholder, at, secretsAllowed, node, report)
        else if (name && !known.has(name)) report(at, `unknown variable "${name}"`)
      }
    } else if (Array.isArray(value)) {
      value.forEach((item, i) => visit(item, [...at, i], secretsAllowed))
    } else if (isRecord(value)) {
      for (const [key, item] of Object.entries(value)) visit(item, [...at, key], secretsAllowed)
    }
  }
  for (const [key, value] of Object.entries(node.data ?? {})) {
    if (node.nodeType?.copiedAsWritten?.(key, value)) continue
    visit(value, ['nodes', node.index, 'data', key], node.nodeType?.secretsIn?.(key) ?? false)
  }
}

function checkSecretReference(placeholder: string, at: Segment[], allowed: boolean, node: NodeInfo, report: Report): void {
  const name = /^\{\{\s*secrets\.([^\s}]*)\s*\}\}$/.exec(placeholder)?.[1]
  const where = `node "${String(node.id)}"`
  if (!allowed) report(at, `${placeholder} in ${where}: a secret can be read only in an httpRequest node's URL, headers and body`)
  else if (name === undefined || !SECRET_NAME_PATTERN.test(name)) report(at, `${placeholder} in ${where}: write a secret as {{secrets.NAME}}, NAME of letters, digits and _`)
}

// ---------------------------------------------------------------------------------------------
// Graph

/** Reports a start count other than one and repeated node ids; answers each id's first node. */
function checkNodeIds(nodes: readonly NodeInfo[], report: Report): ReadonlyMap<string, NodeInfo> {
  const starts = nodes.filter((node) => node.type === 'start')
  if (starts.length === 0) report(['nodes'], 'no start node; a flow has exactly one')
  for (const extra of starts.slice(1)) report(['nodes', extra.index, 'type'], `a second start node (the first is nodes[${starts[0]!.index}]); a flow has exactly one`)
  const byId = new Map<string, NodeInfo>()
  for (const node of nodes) {
    const first = byId.get(node.id)
    if (first) report(['nodes', node.index, 'id'], `duplicate node id "${node.id}" (also nodes[${first.index}])`)
    else byId.set(node.id, node)
  }
  return byId
}

function checkEdges(edges: readonly EdgeInfo[], nodes: ReadonlyMap<string, NodeInfo>, report: Report): void {
  const ids = new Map<string, number>()
  const exitsUsed = new Map<string, number>()
  for (const edge of edges) {
    const at: Segment[] = ['edges', edge.index]
    if (typeof edge.id === 'string') {
      const first = ids.get(edge.id)
      if (first !== undefined) report([...at, 'id'], `duplicate edge id "${edge.id}" (also edges[${first}])`)
      else ids.set(edge.id, edge.index)
    }
    if (typeof edge.target === 'string' && !nodes.has(edge.target)) report([...at, 'target'], `no node "${edge.target}"`)
    if (typeof edge.source !== 'string') continue
    const source = nodes.get(edge.source)
    if (!source) {
      report([...at, 'source'], `no node "${edge.source}"`)
      continue
    }
    if (edge.sourceHandle !== undefined && edge.sourceHandle !== null && typeof edge.sourceHandle !== 'string') continue
    const handle = edge.sourceHandle ?? null
    const exit = `${edge.source}\u0000${handle ?? ''}`
    const firstFromExit = exitsUsed.get(exit)
    if (firstFromExit !== undefined) report(at, `a second edge from the same exit of node "${edge.source}" (the first is edges[${firstFromExit}])`)
    else exitsUsed.set(exit, edge.index)
    if (source.dataMatches && source.data && source.nodeType) checkHandle(edge, source, source.nodeType.exits(source.data), handle, report)
  }
}

function checkHandle(edge: EdgeInfo, source: NodeInfo, exits: readonly Exit[], handle: string | null, report: Report): void {
  const node = `node "${source.id}" (${source.type})`
  const at = ['edges', edge.index]
  if (exits.length === 0) return report([...at, 'source'], `${node} has no exits`)
  if (exits.length === 1 && exits[0]?.id === null) {
    if (handle !== null) report([...at, 'sourceHandle'], `${node} has one unnamed exit; leave sourceHandle out`)
    return
  }
  const handles = exits.flatMap((exit) => (exit.id === null ? [] : [exit.id]))
  if (handle === null) report([...at, 'sourceHandle'], `${node} needs a sourceHandle: one of ${commaList(handles)}`)
  else if (!handles.includes(handle)) report([...at, 'sourceHandle'], `${node} has no handle "${handle}"; its handles are ${commaList(handles)}`)
}

/** Nodes no path from the start reaches are reported; without exactly one start it is not judged. */
function checkReachability(nodes: readonly NodeInfo[], edges: readonly EdgeInfo[], byId: ReadonlyMap<string, NodeInfo>, report: Report): void {
  const starts = nodes.filter((node) => node.type === 'start')
  if (starts.length !== 1) return
  const next = new Map<string, string[]>()
  for (const edge of edges) {
    if (typeof edge.source !== 'string' || typeof edge.target !== 'string') continue
    next.set(edge.source, [...(next.get(edge.source) ?? []), edge.target])
  }
  const reached = new Set<string>([starts[0]!.id])
  const queue = [starts[0]!.id]
  for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
    for (const target of next.get(id) ?? []) {
      if (!reached.has(target) && byId.has(target)) {
        reached.add(target)
        queue.push(target)
      }
    }
  }
  for (const node of byId.values()) if (!reached.has(node.id)) report(['nodes', node.index], 'unreachable from the start node')
}
