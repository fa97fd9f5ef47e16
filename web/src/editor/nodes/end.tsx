import * as end from '../../../../src/domain/nodes/end.js'
import { nodeStrings, type NodeUi } from './node-ui'
import { NODE_TYPE_NAMES } from '../../shared/node-names'

const strings = nodeStrings({
  en: {
    name: NODE_TYPE_NAMES.en.end,
    description: 'Finishes the session',
    'node.finish': 'Session finishes',
    'panel.endHelp': 'Finishes the session (function finish). An exit left unconnected does the same.',
  },
  pt: {
    name: NODE_TYPE_NAMES.pt.end,
    description: 'Encerra a sessão',
    'node.finish': 'A sessão termina',
    'panel.endHelp': 'Encerra a sessão (função finish). Uma saída sem conexão faz o mesmo.',
  },
})

export const endUi: NodeUi<end.Data> = {
  icon: '■',
  strings,
  exits: end.exits,
  newData: () => ({}),
  Summary: () => strings.useT()('node.finish'),
  Form: () => <p className="hint">{strings.useT()('panel.endHelp')}</p>,
}
