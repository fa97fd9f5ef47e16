import { resolveSessionVariables, VARIABLE_TYPES, type SessionVariables, type VariableEvent, type VariableType, type WorkspaceVariable } from '../domain/variables.js'
import type { VariableValue } from '../domain/turn.js'
import type { DbOrTrx } from '../store/database.js'
import { listPage, type Paging } from './paging.js'
import { defineProjection } from './projection.js'

const json = (value: VariableValue | null) => (value === null ? null : JSON.stringify(value))

export const variablesProjection = defineProjection<VariableEvent>({
  name: 'variables',
  streamPrefixes: ['variables-'],
  tables: ['variables'],
  async apply(trx, event) {
    switch (event.type) {
      case 'VariableDefined': {
        const d = event.data
        await trx
          .insertInto('variables')
          .values({
            id: d.variableId,
            workspace_id: d.workspaceId,
            name: d.name,
            type: d.type,
            description: d.description,
            default_value: json(d.defaultValue),
            created_at: d.definedAt,
            updated_at: d.definedAt,
          })
          .onConflict((oc) => oc.column('id').doNothing())
          .execute()
        break
      }
      case 'VariableChanged': {
        const d = event.data
        await trx
          .updateTable('variables')
          .set({ description: d.description, default_value: json(d.defaultValue), updated_at: d.changedAt })
          .where('id', '=', d.variableId)
          .execute()
        break
      }
      case 'VariableRemoved':
        await trx.deleteFrom('variables').where('id', '=', event.data.variableId).execute()
        break
    }
  },
})

const COLUMNS = ['id', 'name', 'type', 'description', 'default_value', 'created_at', 'updated_at'] as const

const isVariableType = (type: string): type is VariableType => (VARIABLE_TYPES as readonly string[]).includes(type)

const toVariable = (row: { id: string; name: string; type: string; description: string | null; default_value: unknown; created_at: Date; updated_at: Date }): WorkspaceVariable => {
  if (!isVariableType(row.type)) throw new Error(`variable ${row.id} has an unknown type ${row.type}`)
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    description: row.description,
    // Only VariableDefined and VariableChanged write it, from values their schema checked.
    defaultValue: (row.default_value ?? null) as VariableValue | null,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  }
}

/** Variables of one workspace, oldest first. */
export async function listVariables(db: DbOrTrx, query: Paging & { workspaceId: string }) {
  const matching = db.selectFrom('variables').where('workspace_id', '=', query.workspaceId)
  const ordered = matching.select(COLUMNS).orderBy('created_at').orderBy('id')
  return listPage({ matching, ordered }, query, toVariable)
}

/** Every variable of one workspace. */
export async function allVariables(db: DbOrTrx, workspaceId: string): Promise<WorkspaceVariable[]> {
  const rows = await db.selectFrom('variables').select(COLUMNS).where('workspace_id', '=', workspaceId).orderBy('name').execute()
  return rows.map(toVariable)
}

/**
 * The variables a session of the workspace starts with: `given` checked against the workspace's
 * variables (unknown names and wrong types are problems naming each key), defaults filled in.
 */
export async function checkSessionVariables(db: DbOrTrx, workspaceId: string, given: Readonly<Record<string, unknown>>): Promise<SessionVariables> {
  return resolveSessionVariables(await allVariables(db, workspaceId), given)
}
