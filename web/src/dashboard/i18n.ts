import { createI18n } from '../shared/i18n'
import * as common from './messages/common'
import * as flows from './messages/flows'
import * as kanban from './messages/kanban'
import * as sessions from './messages/sessions'
import * as webhooks from './messages/webhooks'
import * as workspaces from './messages/workspaces'

const en = { ...common.en, ...workspaces.en, ...flows.en, ...sessions.en, ...kanban.en, ...webhooks.en }
const pt: Record<keyof typeof en, string> = { ...common.pt, ...workspaces.pt, ...flows.pt, ...sessions.pt, ...kanban.pt, ...webhooks.pt }

export type MessageKey = keyof typeof en
export const { translator, I18nProvider, useT } = createI18n<MessageKey>({ en, pt })
