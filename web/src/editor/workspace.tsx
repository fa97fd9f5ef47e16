import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react'
import type { FlowApi, NewVariable, Pipeline, Sector, Variable, VariableChange } from './api'

/** What the forms pick from: the workspace's sectors, pipelines and variables, and how to add to them. */
export interface Workspace {
  sectors: Sector[]
  pipelines: Pipeline[]
  variables: Variable[]
  createSector(name: string): Promise<string>
  createVariable(input: NewVariable): Promise<Variable>
  updateVariable(id: string, input: VariableChange): Promise<Variable>
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

  const value = useMemo(
    () => ({ sectors, pipelines: initial.pipelines, variables, createSector, createVariable, updateVariable }),
    [sectors, initial.pipelines, variables, createSector, createVariable, updateVariable],
  )
  return <WorkspaceContext.Provider value={value}>{children}</WorkspaceContext.Provider>
}

export function useWorkspace(): Workspace {
  const workspace = useContext(WorkspaceContext)
  if (!workspace) throw new Error('useWorkspace outside WorkspaceProvider')
  return workspace
}
