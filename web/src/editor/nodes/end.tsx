import * as end from '../../../../src/domain/nodes/end.js'
import { useT } from '../i18n'
import type { NodeUi } from './node-ui'

export const endUi: NodeUi<end.Data> = {
  icon: '■',
  exits: end.exits,
  newData: () => ({}),
  Summary: () => useT()('node.finish'),
  Form: () => <p className="hint">{useT()('panel.endHelp')}</p>,
}
