import { Fragment } from 'react'
import * as message from '../../../../src/domain/nodes/message.js'
import type { OutgoingMessage } from '../flow-definition'
import { ListControls, moveItem, replaceAt } from '../forms/fields'
import { MessageComposer, messageOfKind } from '../forms/MessageComposer'
import { NodeButtons } from './NodeButtons'
import { clip, nodeStrings, previewMessage, type FormProps, type NodeUi } from './node-ui'
import { NODE_TYPE_NAMES } from '../../shared/node-names'

const strings = nodeStrings({
  en: {
    name: NODE_TYPE_NAMES.en.message,
    description: 'Sends one or more messages',
    'node.messages': '{count} messages',
    'msg.messages': 'Messages',
    'msg.add': 'Add message',
  },
  pt: {
    name: NODE_TYPE_NAMES.pt.message,
    description: 'Envia uma ou mais mensagens',
    'node.messages': '{count} mensagens',
    'msg.messages': 'Mensagens',
    'msg.add': 'Adicionar mensagem',
  },
})

function MessageSummary({ data }: { data: Partial<message.Data> }) {
  const t = strings.useT()
  const messages = data.messages ?? []
  return (
    <>
      {messages.slice(0, 3).map((m, i) => (
        <Fragment key={i}>
          <p className="preview">{clip(previewMessage(m, t))}</p>
          <NodeButtons message={m} />
        </Fragment>
      ))}
      {messages.length > 3 && <p className="muted">{t('node.messages', { count: messages.length })}</p>}
    </>
  )
}

function MessageForm({ data, onChange }: FormProps<message.Data>) {
  const t = strings.useT()
  const messages = data.messages ?? []
  const set = (next: OutgoingMessage[]) => onChange({ ...data, messages: next })
  return (
    <fieldset className="group">
      <legend>{t('msg.messages')}</legend>
      {messages.map((message, i) => (
        <div className="item" key={i}>
          <div className="item-head">
            <span>#{i + 1}</span>
            <ListControls index={i} count={messages.length} canRemove={messages.length > 1} onMove={(a, b) => set(moveItem(messages, a, b))} onRemove={() => set(messages.filter((_, j) => j !== i))} />
          </div>
          <MessageComposer value={message} onChange={(m) => set(replaceAt(messages, i, m))} />
        </div>
      ))}
      <button type="button" className="add" onClick={() => set([...messages, messageOfKind('text')])}>
        + {t('msg.add')}
      </button>
    </fieldset>
  )
}

export const messageUi: NodeUi<message.Data> = {
  icon: '✉',
  strings,
  exits: message.exits,
  newData: () => ({ messages: [{ type: 'text', text: { body: '' } }] }),
  Summary: MessageSummary,
  Form: MessageForm,
}
