import type { ComponentType } from 'react'
import type { Dictionaries, Lang, Translate as TranslateOf } from '../../shared/i18n'
import { useLang, withStrings, type MessageKey, type Translate } from '../i18n'
import type { Exit, OutgoingMessage } from '../flow-definition'

/**
 * How the editor shows and edits one node type. Its data, exits and limits are the type's own
 * module of the service (src/domain/nodes); this is only its look: icon, words, canvas body and form.
 */
export interface NodeUi<Data> {
  /** Shown in the palette, on the node and in its panel. */
  icon: string
  /** Its name and palette description, in both languages: the `nodeStrings` of its module. */
  strings: Dictionaries<TypeWord>
  /** The node's exits, in the order the canvas shows them: its type's own. */
  exits(data: Partial<Data>): readonly Exit[]
  /** What a node holds when it is added from the palette. */
  newData(defaults: NewNodeDefaults): Data
  /** The node's body on the canvas; a draft's data may be incomplete. */
  Summary: ComponentType<{ data: Partial<Data> }>
  /** The node's form in the side panel. */
  Form: ComponentType<FormProps<Data>>
  /** What the canvas shows beside a named exit, in `lang`; the exit's label when absent. */
  exitLabel?(data: Partial<Data>, exit: Exit, lang: Lang): string | undefined
}

/** What every node type says of itself: its name, and its description in the palette. */
type TypeWord = 'name' | 'description'

/** A node type's own strings and the translators that say them along with those of i18n.tsx. */
export interface NodeStrings<Key extends string> extends Dictionaries<Key> {
  /** For the type's body and form, in the editor's language. */
  useT(): TranslateOf<MessageKey | Key>
  translator(lang: Lang): TranslateOf<MessageKey | Key>
}

/** Names the keys of i18n.tsx a node type's strings take again, so that tsc reports them. */
type NotInI18n<Key extends string> = [Extract<Key, MessageKey>] extends [never] ? unknown : { keysOfI18nTsx: Extract<Key, MessageKey> }

/**
 * A node type's strings, in English and Portuguese: its name, its palette description and what
 * only its body and form say. Strings several types say are in i18n.tsx; a key of i18n.tsx is not
 * taken again here.
 */
export function nodeStrings<Key extends string>(
  strings: { en: Record<Key | TypeWord, string>; pt: NoInfer<Record<Key | TypeWord, string>> } & NotInI18n<Key>,
): NodeStrings<Key> {
  const byLang = withStrings(strings)
  return { ...strings, useT: () => byLang[useLang()], translator: (lang) => byLang[lang] }
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
