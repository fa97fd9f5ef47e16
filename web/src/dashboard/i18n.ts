import { apiProblemsEn, apiProblemsPt } from '../shared/api-problems-strings'
import { chatTranscriptEn, chatTranscriptPt } from '../shared/chat-transcript-strings'
import { outsideCallEn, outsideCallPt } from '../shared/outside-call-strings'
import { createI18n, type Translate as SharedTranslate } from '../shared/i18n'
import * as aiConnections from './strings/ai-connections'
import * as common from './strings/common'
import * as flowTests from './strings/flow-tests'
import * as flows from './strings/flows'
import * as kanban from './strings/kanban'
import * as releases from './strings/releases'
import * as replays from './strings/replays'
import * as sessions from './strings/sessions'
import * as webhooks from './strings/webhooks'
import * as workspaces from './strings/workspaces'

const en = { ...chatTranscriptEn, ...outsideCallEn, ...apiProblemsEn, ...common.en, ...workspaces.en, ...flows.en, ...flowTests.en, ...releases.en, ...replays.en, ...sessions.en, ...kanban.en, ...webhooks.en, ...aiConnections.en }
const pt: Record<keyof typeof en, string> = { ...chatTranscriptPt, ...outsideCallPt, ...apiProblemsPt, ...common.pt, ...workspaces.pt, ...flows.pt, ...flowTests.pt, ...releases.pt, ...replays.pt, ...sessions.pt, ...kanban.pt, ...webhooks.pt, ...aiConnections.pt }

export type MessageKey = keyof typeof en
export type Translate = SharedTranslate<MessageKey>
export const { translator, I18nProvider, useT } = createI18n<MessageKey>({ en, pt })
