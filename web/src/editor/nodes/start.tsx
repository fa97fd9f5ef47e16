import * as start from '../../../../src/domain/nodes/start.js'
import { useT } from '../i18n'
import type { NodeUi } from './node-ui'

export const startUi: NodeUi<start.Data> = {
  icon: '▶',
  exits: start.exits,
  newData: () => ({}),
  Summary: () => useT()('node.entry'),
  Form: () => <p className="hint">{useT()('panel.startHelp')}</p>,
}
