import { createContext, useCallback, useContext, useMemo, useRef, useState, type ReactNode } from 'react'
import type { FlowApi, NewVariable, Pipeline, Sector, TriedCall, TryRequestBody, Variable, VariableChange } from './api'

/**
 * What the forms pick from: the workspace's sectors, pipelines, variables and secret names, how to
 * add to them, and the one call a form makes itself (an HTTP request's "Try it").
 */
export interface Workspace {
  sectors: Sector[]
  pipelines: Pipeline[]
  variables: Variable[]
  createSector(name: string): Promise<string>
  createVariable(input: NewVariable): Promise<Variable>
  updateVariable(id: string, input: VariableChange): Promise<Variable>
  /** The names of the workspace's secrets, read when first asked for; an ApiError when the service refuses to list them. */
  secretNames(): Promise<string[]>
  tryHttpRequest(body: TryRequestBody): Promise<TriedCall>
}

const WorkspaceContext = createContext<Workspace | undefined>(undefined)

export interface Catalog {
  sectors: Sector[]
  pipelines: Pipeline[]
  variables: Variable[]
}

export function WorkspaceProvider({ api, initial, children }: { api: FlowApi; initial: Catalog; children: ReactNode }) {
  const [sectors, setSectors] = useState(initial.sectors)
  const [variables, setVariables] = useState(initial.variables)

  const createSector = useCallback(
    async (name: string) => {
      const id = await api.createSector(name)
      setSectors(await api.sectors())
      return id
    },
    [api],
  )
  const createVariable = useCallback<Workspace['createVariable']>(
    async (input) => {
      const created = await api.createVariable(input)
      setVariables((list) => [...list, created])
      return created
    },
    [api],
  )
  const updateVariable = useCallback<Workspace['updateVariable']>(
    async (id, input) => {
      const updated = await api.updateVariable(id, input)
      setVariables((list) => list.map((v) => (v.id === id ? updated : v)))
      return updated
    },
    [api],
  )

  const secrets = useRef<Promise<string[]>>(undefined)
  const secretNames = useCallback(() => {
    const names = (secrets.current ??= api.secretNames())
    // A refusal is not kept: the next form that asks tries again.
    names.catch(() => {
      if (secrets.current === names) secrets.current = undefined
    })
    return names
  }, [api])

  const value = useMemo(
    () => ({ sectors, pipelines: initial.pipelines, variables, createSector, createVariable, updateVariable, secretNames, tryHttpRequest: api.tryHttpRequest }),
    [sectors, initial.pipelines, variables, createSector, createVariable, updateVariable, secretNames, api],
  )
  return <WorkspaceContext.Provider value={value}>{children}</WorkspaceContext.Provider>
}

export function useWorkspace(): Workspace {
  const workspace = useContext(WorkspaceContext)
  if (!workspace) throw new Error('useWorkspace outside WorkspaceProvider')
  return workspace
}
