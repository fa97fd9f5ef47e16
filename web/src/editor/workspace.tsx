import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react'
import type { AiConnection, FlowApi, FlowChoice, NewVariable, Pipeline, Sector, TriedAiStep, TriedCall, TryAiStepBody, TryRequestBody, Variable, VariableChange } from './api'

/**
 * What the forms pick from: the workspace's sectors, pipelines, variables, secret names and other
 * flows and AI connections, how to add to them, and the calls a form makes itself (an HTTP request's
 * and an AI step's "Try it").
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
  /** The workspace's flows but the one edited, which a runFlow node may run, read when first asked for. */
  flows(): Promise<FlowChoice[]>
  /** The workspace's AI connections, which an ai node may call, read when first asked for. */
  aiConnections(): Promise<AiConnection[]>
  tryHttpRequest(body: TryRequestBody): Promise<TriedCall>
  tryAiStep(body: TryAiStepBody): Promise<TriedAiStep>
}

const WorkspaceContext = createContext<Workspace | undefined>(undefined)

export interface Catalog {
  sectors: Sector[]
  pipelines: Pipeline[]
  variables: Variable[]
}

export function WorkspaceProvider({ api, flowId, initial, children }: { api: FlowApi; flowId: string; initial: Catalog; children: ReactNode }) {
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

  const secretNames = useReadOnce(api.secretNames)
  const flows = useReadOnce(useCallback(async () => (await api.flows()).filter((flow) => flow.id !== flowId), [api, flowId]))
  const aiConnections = useReadOnce(api.aiConnections)

  const value = useMemo(
    () => ({ sectors, pipelines: initial.pipelines, variables, createSector, createVariable, updateVariable, secretNames, flows, aiConnections, tryHttpRequest: api.tryHttpRequest, tryAiStep: api.tryAiStep }),
    [sectors, initial.pipelines, variables, createSector, createVariable, updateVariable, secretNames, flows, aiConnections, api],
  )
  return <WorkspaceContext.Provider value={value}>{children}</WorkspaceContext.Provider>
}

/** `read`, called when first asked for and its answer kept for every later ask. */
function useReadOnce<T>(read: () => Promise<T>): () => Promise<T> {
  const kept = useRef<Promise<T>>(undefined)
  return useCallback(() => {
    const answer = (kept.current ??= read())
    // A refusal is not kept: the next form that asks tries again.
    answer.catch(() => {
      if (kept.current === answer) kept.current = undefined
    })
    return answer
  }, [read])
}

export function useWorkspace(): Workspace {
  const workspace = useContext(WorkspaceContext)
  if (!workspace) throw new Error('useWorkspace outside WorkspaceProvider')
  return workspace
}

/** What `read` answers (a list the workspace reads when first asked for): 'loading' until it has, 'refused' when the service refused. */
export function useAnswer<T>(read: () => Promise<T>): T | 'loading' | 'refused' {
  const [answer, setAnswer] = useState<T | 'loading' | 'refused'>('loading')
  useEffect(() => {
    let current = true
    read().then(
      (found) => current && setAnswer(found),
      () => current && setAnswer('refused'),
    )
    return () => {
      current = false
    }
  }, [read])
  return answer
}
