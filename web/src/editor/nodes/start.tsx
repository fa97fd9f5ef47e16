import * as start from '../../../../src/domain/nodes/start.js'
import { nodeStrings, type NodeUi } from './node-ui'
import { NODE_TYPE_NAMES } from '../../shared/node-names'

const strings = nodeStrings({
  en: {
    name: NODE_TYPE_NAMES.en.start,
    description: 'Where every session begins',
    'node.entry': 'Session starts here',
    'panel.startHelp': 'The session begins here and follows its exit. A flow has exactly one start.',
  },
  pt: {
    name: NODE_TYPE_NAMES.pt.start,
    description: 'Onde toda sessão começa',
    'node.entry': 'A sessão começa aqui',
    'panel.startHelp': 'A sessão começa aqui e segue a saída. Um fluxo tem exatamente um início.',
  },
})

export const startUi: NodeUi<start.Data> = {
  icon: '▶',
  strings,
  exits: start.exits,
  newData: () => ({}),
  Summary: () => strings.useT()('node.entry'),
  Form: () => <p className="hint">{strings.useT()('panel.startHelp')}</p>,
}
