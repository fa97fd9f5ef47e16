import { useState } from 'react'
import { useParams } from 'wouter'
import { messageText } from '../../../shared/api-problems'
import { EditorFrame, type EditorStatus } from '../../components/EditorFrame'
import { ErrorNotice } from '../../components/ui'
import { useT } from '../../i18n'
import { usePreferences } from '../../preferences'
import { useActingWorkspace } from '../../acting-workspace'
import { FlowHeader, useFlow } from './FlowHeader'

/** The visual editor on a flow, filling the screen, signed in by the dashboard's own session. */
export function EditorScreen() {
  const t = useT()
  const { id } = useParams<{ id: string }>()
  const { workspaceId } = useActingWorkspace()
  const { lang, theme } = usePreferences()
  const flow = useFlow(id)
  const [status, setStatus] = useState<EditorStatus>()
  const [dirty, setDirty] = useState(false)
  const name = flow.data?.name
  return (
    <section className="flows-editor">
      <FlowHeader id={id} title={name ? t('flows.editor.title', { name }) : t('flows.editor.titleUnnamed')}>
        <p role="status" className="flows-editor-status" data-testid="editor-status">
          {status && <EditorStatusText status={status} />}
          {dirty && <span className="badge warn">{t('flows.editor.status.unsaved')}</span>}
        </p>
      </FlowHeader>
      {flow.error && <ErrorNotice error={flow.error} onRetry={flow.reload} />}
      {/* A new frame for a new language or theme: the editor reads both from its address. */}
      <EditorFrame key={`${id}-${lang}-${theme}`} workspaceId={workspaceId} flowId={id} lang={lang} theme={theme} title={t('flows.editor.frameTitle')} onStatus={setStatus} onDirty={setDirty} />
    </section>
  )
}

function EditorStatusText({ status }: { status: EditorStatus }) {
  const t = useT()
  switch (status.type) {
    case 'loading':
      return <>{t('flows.editor.status.loading')}</>
    case 'ready':
      return <>{t('flows.editor.status.signingIn')}</>
    case 'authenticated':
      return <span className="badge">{t('flows.editor.status.authenticated')}</span>
    case 'saved':
      return <span className="badge ok">{t('flows.editor.status.saved')}</span>
    case 'published':
      return <span className="badge ok">{t('flows.editor.status.published', { version: status.version })}</span>
    case 'error':
      return <span className="badge error">{t(`flows.editor.error.${status.code}`, { message: messageText(status.message, t) })}</span>
  }
}
