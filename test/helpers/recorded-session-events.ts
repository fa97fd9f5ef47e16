import { randomUUID } from 'node:crypto'
import type { RecordedEvent } from '../../src/eventstore/port.js'

let position = 0n

/** A session event as the log records it, each at the next position, for a read model to apply. */
export const recordedSessionEvent = (type: string, data: { sessionId: string } & Record<string, unknown>): RecordedEvent => ({
  id: randomUUID(),
  type,
  data,
  metadata: {},
  stream: `session-${data.sessionId}`,
  revision: 0n,
  position: { commit: position, prepare: position++ },
  createdAt: new Date(0).toISOString(),
})

/** A session started in one workspace of one organization, on version 1 of one flow. */
export const recordedSessionStart = (sessionId: string, startedAt: string, expiresAt: string): RecordedEvent =>
  recordedSessionEvent('SessionStarted', {
    sessionId,
    workspaceId: '01a20247-0000-7000-8000-000000000001',
    organizationId: '01a20247-0000-7000-8000-000000000002',
    flowId: '01a20247-0000-7000-8000-000000000003',
    flowVersion: 1,
    externalId: null,
    startedAt,
    expiresAt,
  })
