import type { ComponentType } from 'react'
import type { Translate } from '../i18n'
import type { Exit, OutgoingMessage } from '../flow/types'

/**
 * How the editor shows and edits one node type. Its data, exits and limits are the type's own
 * module of the service (src/domain/nodes); this is only its look: icon, canvas body and form.
 * Its name and palette description are the `type.<name>` and `desc.<name>` strings of i18n.tsx.
 */
export interface NodeUi<Data> {
  /** Shown in the palette, on the node and in its panel. */
  icon: string
  /** The node's exits, in the order the canvas shows them: its type's own. */
  exits(data: Partial<Data>): readonly Exit[]
  /** What a node holds when it is added from the palette. */
  newData(defaults: NewNodeDefaults): Data
  /** The node's body on the canvas; a draft's data may be incomplete. */
  Summary: ComponentType<{ data: Partial<Data> }>
  /** The node's form in the side panel. */
  Form: ComponentType<FormProps<Data>>
  /** What the canvas shows beside a named exit; the exit's label when absent. */
  exitLabel?(data: Partial<Data>, exit: Exit, t: Translate): string | undefined
}

/** The workspace's first sector and first pipeline stage, for a new node to point at. */
export interface NewNodeDefaults {
  sectorId?: string
  pipelineId?: string
  stageId?: string
}

export interface FormProps<T> {
  data: T
  onChange(data: T): void
  /** An exit (reply id, rule id) was renamed: its edge follows it. */
  onRenameExit(from: string, to: string): void
}

export const clip = (text: string, max = 60) => (text.length > max ? `${text.slice(0, max - 1)}…` : text)

/** One line that tells what a message sends. */
export function previewMessage(message: OutgoingMessage | undefined, t: Translate): string {
  if (!message) return t('node.empty')
  switch (message.type) {
    case 'text':
      return message.text?.body || t('node.empty')
    case 'media':
      return `[${t(`media.${message.media?.type ?? 'image'}`)}] ${message.media?.caption || message.media?.url || ''}`
    case 'template':
      return `[${t('kind.template')}] ${message.template?.id ?? ''}`
    case 'interactive':
      return message.interactive?.body?.text || t('node.empty')
    default:
      return t('node.empty')
  }
}
