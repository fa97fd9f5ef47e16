import { useState } from 'react'
import { MAX_SECRETS_PER_WORKSPACE } from '../../../../../src/domain/secret-rules.js'
import { api, unwrap } from '../../api'
import { useAsync } from '../../components/async'
import { ListView, type Column } from '../../components/ListView'
import { usePagedList } from '../../components/paged-list'
import { PageHeader } from '../../components/ui'
import { useT } from '../../i18n'
import { DeleteAction } from '../workspaces/forms'
import type { AiConnection } from './api-types'
import { CheckResult, useConnectionCheck } from './ConnectionCheck'
import { ConnectionForm } from './ConnectionForm'

/** The host (and port) a base URL calls; the whole URL is its title. */
const hostOf = (baseUrl: string): string => {
  try {
    return new URL(baseUrl).host
  } catch {
    return baseUrl
  }
}

/**
 * The workspace's AI connections: listed with their model, endpoint and limits, tested, created,
 * edited and deleted. A key is never shown: a connection names the secret that holds it.
 */
export function AiConnectionsScreen() {
  const t = useT()
  const connections = usePagedList((paging) => unwrap(api.GET('/v1/ai-connections', { params: { query: paging } })), [])
  const secrets = useAsync(async () => (await unwrap(api.GET('/v1/secrets', { params: { query: { page: 0, size: MAX_SECRETS_PER_WORKSPACE } } }))).content.map((secret) => secret.name), [])
  const check = useConnectionCheck()
  const [editing, setEditing] = useState<AiConnection>()
  const [announced, setAnnounced] = useState('')
  const format = new Intl.NumberFormat(t('api.numberLocale'))
  // A change makes the last test's finding stale.
  const changed = (message: string) => {
    setAnnounced(message)
    setEditing(undefined)
    check.clear()
    connections.reload()
  }

  const columns: Column<AiConnection>[] = [
    { header: t('common.name'), namesRow: true, cell: (connection) => connection.name },
    { header: t('aiConnections.model'), className: 'mono', cell: (connection) => connection.model },
    { header: t('aiConnections.endpoint'), className: 'mono', cell: (connection) => <span title={connection.baseUrl}>{hostOf(connection.baseUrl)}</span> },
    { header: t('aiConnections.secret'), className: 'mono', cell: (connection) => connection.apiKeySecret },
    {
      header: t('aiConnections.limits'),
      cell: (connection) => t('aiConnections.limitsOf', { tokens: format.format(connection.maxTokensPerCall), calls: format.format(connection.callsPerSession) }),
    },
    {
      header: t('common.actions'),
      className: 'ws-actions',
      cell: (connection) => (
        <>
          <button
            type="button"
            aria-label={t('aiConnections.testOf', { name: connection.name })}
            disabled={check.state.name === 'running' && check.state.connection.id === connection.id}
            onClick={() => void check.run(connection)}
          >
            {t('aiConnections.test')}
          </button>
          <button type="button" className="secondary" aria-label={t('aiConnections.editOf', { name: connection.name })} onClick={() => setEditing(connection)}>
            {t('aiConnections.edit')}
          </button>
          <DeleteAction
            name={connection.name}
            question={t('aiConnections.confirmDelete', { name: connection.name })}
            onDelete={async () => {
              await unwrap(api.DELETE('/v1/ai-connections/{id}', { params: { path: { id: connection.id } } }))
              changed(t('aiConnections.deleted', { name: connection.name }))
            }}
          />
        </>
      ),
    },
  ]

  return (
    <section>
      <PageHeader title={t('aiConnections.title')} />
      <p className="hint aic-intro">{t('aiConnections.intro')}</p>
      <p role="status" className="ws-announce">
        {announced}
      </p>
      <ListView list={connections} empty={t('aiConnections.empty')} rowKey={(connection) => connection.id} columns={columns} />
      <CheckResult state={check.state} />
      <ConnectionForm
        key={editing?.id ?? 'new'}
        editing={editing}
        secrets={secrets}
        onCancel={() => setEditing(undefined)}
        onSaved={(name) => changed(editing ? t('aiConnections.updated', { name }) : t('aiConnections.created', { name }))}
      />
    </section>
  )
}
