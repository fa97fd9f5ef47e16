import type { NodeTypeName } from '../../../src/domain/nodes/index.js'
import type { Lang } from './i18n'

/** Each node type's name, as the editor's palette and canvas and the dashboard's screens call it. */
export const NODE_TYPE_NAMES: Record<Lang, Record<NodeTypeName, string>> = {
  en: {
    start: 'Start',
    message: 'Message',
    question: 'Question',
    condition: 'Condition',
    split: 'A/B split',
    setVariable: 'Set variable',
    httpRequest: 'HTTP request',
    ai: 'AI step',
    waitForEvent: 'Wait for event',
    delay: 'Delay',
    runFlow: 'Run flow',
    transfer: 'Transfer',
    kanbanMove: 'Kanban move',
    end: 'End',
  },
  pt: {
    start: 'Início',
    message: 'Mensagem',
    question: 'Pergunta',
    condition: 'Condição',
    split: 'Teste A/B',
    setVariable: 'Definir variável',
    httpRequest: 'Requisição HTTP',
    ai: 'Etapa de IA',
    waitForEvent: 'Aguardar evento',
    delay: 'Pausa',
    runFlow: 'Executar fluxo',
    transfer: 'Transferência',
    kanbanMove: 'Mover no kanban',
    end: 'Fim',
  },
}

/** A node type's name in `lang`; a type this build does not know keeps its own word. */
export const nodeTypeName = (type: string, lang: Lang): string => (Object.hasOwn(NODE_TYPE_NAMES.en, type) ? NODE_TYPE_NAMES[lang][type as NodeTypeName] : type)

/** What a node of a definition holds that names it. */
export interface NamedNode {
  id: string
  type: string
  data: Record<string, unknown>
}

/** The label a node's author gave it (`data.label`, or `data.title`), if any. */
export function nodeLabel(node: NamedNode): string | undefined {
  const label = node.data.label ?? node.data.title
  return typeof label === 'string' && label.trim() ? label.trim() : undefined
}

/** What people read for a node: its label, else its type's name (its id is for a tooltip). */
export const nodeName = (node: NamedNode, lang: Lang): string => nodeLabel(node) ?? nodeTypeName(node.type, lang)

/**
 * A line of what the node says or does (a message's or question's first text, the variable it
 * sets, the request it sends, the event it waits for, an AI step's instructions), to tell apart nodes of one type that have no label.
 */
export function nodeGist(node: NamedNode): string | undefined {
  const { data } = node
  const textOf = (message: unknown): string | undefined => {
    if (!isRecord(message)) return undefined
    const text = isRecord(message.text) ? message.text.body : isRecord(message.interactive) && isRecord(message.interactive.body) ? message.interactive.body.text : isRecord(message.media) ? message.media.caption : undefined
    return typeof text === 'string' && text.trim() ? text.trim().replace(/\s+/g, ' ') : undefined
  }
  if (Array.isArray(data.messages)) return data.messages.map(textOf).find((text) => text !== undefined)
  if (data.prompt !== undefined) return textOf(data.prompt)
  if (typeof data.variable === 'string' && node.type === 'setVariable') return data.variable
  if (typeof data.url === 'string' && data.url && node.type === 'httpRequest') return `${typeof data.method === 'string' ? data.method : ''} ${data.url}`.trim()
  if (typeof data.event === 'string' && data.event && node.type === 'waitForEvent') return data.event
  if (typeof data.instructions === 'string' && data.instructions.trim() && node.type === 'ai') return data.instructions.trim().replace(/\s+/g, ' ')
  return undefined
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)
