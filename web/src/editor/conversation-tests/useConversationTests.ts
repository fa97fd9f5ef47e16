import { useCallback, useRef, useState } from 'react'
import type { ConversationTest, ConversationTestBody, FailingTest, FlowApi } from '../api'
import type { TestResult } from './expectations'

/** The draft as the editor holds it, which a run saves first: the service runs the saved draft. */
export interface DraftToRun {
  /** Its JSON, to tell whether a result is of the draft shown. */
  json: string
  dirty: boolean
  save(): Promise<boolean>
}

/** A test's result: a run's, or only that it failed, as a refused publish said (no steps to show then). */
export type Outcome = TestResult & { refusedPublish?: true }

/** What the newest run found, or a refused publish said: each test's result by id, the draft it ran, and whether that draft was saved. */
export interface Results {
  byId: ReadonlyMap<string, Outcome>
  /** The draft's JSON when the run started. */
  draft: string
  /** The draft had unsaved changes that could not be saved: the service ran the last saved one. */
  unsaved: boolean
}

export interface ConversationTests {
  /** The flow's tests in name order; undefined until read. */
  list: ConversationTest[] | undefined
  /** Why the list could not be read. */
  failure: unknown
  results: Results | undefined
  /** What runs now: every test, or one by id. */
  running: 'all' | string | undefined
  /** Why the newest run could not be made. */
  runFailure: unknown
  /** Reads the list (again). */
  load(): Promise<void>
  /** Saves a new test with the flow; throws the service's refusal. */
  create(body: ConversationTestBody): Promise<void>
  /** Deletes a test; throws the service's refusal. */
  remove(testId: string): Promise<void>
  /** Runs every test, or the one of `testId`, against the draft, saving it first. */
  run(testId?: string): Promise<void>
  /** Marks the tests a refused publish of the draft `json` named as failing, until a run says more. */
  markFailing(failing: readonly FailingTest[], json: string): void
}

/** The flow's conversation tests, shared by the Tests panel and the test panel's "Save as test". */
export function useConversationTests(api: FlowApi, flowId: string, draft: DraftToRun): ConversationTests {
  const [list, setList] = useState<ConversationTest[]>()
  const [failure, setFailure] = useState<unknown>()
  const [results, setResults] = useState<Results>()
  const [running, setRunning] = useState<'all' | string>()
  const [runFailure, setRunFailure] = useState<unknown>()
  // The draft at the time of a call, without making every callback new on each keystroke.
  const latest = useRef(draft)
  latest.current = draft

  const load = useCallback(async () => {
    try {
      setList(await api.tests(flowId))
      setFailure(undefined)
    } catch (error) {
      setFailure(error)
    }
  }, [api, flowId])

  const create = useCallback(
    async (body: ConversationTestBody) => {
      await api.createTest(flowId, body)
      await load()
    },
    [api, flowId, load],
  )

  const remove = useCallback(
    async (testId: string) => {
      await api.deleteTest(flowId, testId)
      setList((tests) => tests?.filter((test) => test.id !== testId))
      setResults((found) => {
        if (!found) return found
        const byId = new Map(found.byId)
        byId.delete(testId)
        return { ...found, byId }
      })
    },
    [api, flowId],
  )

  const run = useCallback(
    async (testId?: string) => {
      setRunning(testId ?? 'all')
      setRunFailure(undefined)
      try {
        const { json, dirty, save } = latest.current
        const unsaved = dirty && !(await save())
        const ran = await api.runTests(flowId, testId ? [testId] : undefined)
        setResults((found) => {
          // One test run again keeps the others' results while they are of the same draft.
          const kept = testId && found && found.draft === json && found.unsaved === unsaved ? found.byId : []
          return { byId: new Map([...kept, ...ran.tests.map((test) => [test.id, test] as const)]), draft: json, unsaved }
        })
      } catch (error) {
        setRunFailure(error)
      } finally {
        setRunning(undefined)
      }
    },
    [api, flowId],
  )

  const markFailing = useCallback((failing: readonly FailingTest[], json: string) => {
    const byId = new Map(failing.map(({ id, name }): [string, Outcome] => [id, { id, name, passed: false, steps: [], refusedPublish: true }]))
    setResults({ byId, draft: json, unsaved: false })
  }, [])

  return { list, failure, results, running, runFailure, load, create, remove, run, markFailing }
}
