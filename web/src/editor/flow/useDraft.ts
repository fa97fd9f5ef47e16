import { useCallback, useEffect, useMemo, useRef, useState } from 'react'
import { sameJson } from '../../../../src/domain/json.js'
import { errorText } from '../../shared/api-problems'
import { ApiError, StaleDraftError, TestsFailedError, type FailingTest, type FlowApi, type FlowDetail, type Release } from '../api'
import type { FlowDefinition } from '../flow-definition'
import { useT, type Translate } from '../i18n'
import type { EditorMessage } from '../protocol'
import { emptyProblems, indexProblems, toDefinition, toGraph, withSetting, type ProblemIndex } from './model'
import { forPeople } from './problem-text'
import { useCtrlKeys } from './shortcuts'
import type { FlowGraph } from './useFlowGraph'

/** The line under the toolbar: what the last save, publish or check did. */
export interface Status {
  kind: 'ok' | 'error'
  text: string
  /** A publish was refused because these tests fail against the draft: the line offers to show them. */
  failingTests?: FailingTest[]
}

/** What a failed call means for the person and for the host page. */
export interface Failure {
  status: Status
  message: Extract<EditorMessage, { type: 'error' }>
  /** The newer draft's version, when a save found that someone else saved meanwhile. */
  conflict?: number
  /** What the service found wrong with `sent`, when it refused it as invalid. */
  problems?: ProblemIndex
}

export function failure(error: unknown, sent: FlowDefinition, t: Translate): Failure {
  if (error instanceof StaleDraftError) {
    return { conflict: error.currentDraftVersion, status: { kind: 'error', text: t('status.conflict') }, message: { type: 'error', code: 'draft_conflict', message: error.message } }
  }
  if (error instanceof TestsFailedError) {
    const names = error.failingTests.map((test) => `“${test.name}”`).join(', ')
    const text = `${errorText(error, t)} ${t('status.failingTests', { count: error.failingTests.length, names })}`
    return { status: { kind: 'error', text, failingTests: error.failingTests }, message: { type: 'error', code: 'request_failed', message: error.message } }
  }
  if (error instanceof ApiError && error.status === 400 && error.problems.length > 0) {
    return {
      problems: indexProblems(sent, forPeople(sent, error.problems, t)),
      status: { kind: 'error', text: t('status.invalid', { count: error.problems.length }) },
      message: { type: 'error', code: 'invalid_flow', message: error.message },
    }
  }
  // The person reads the failure in words; the host page gets the service's own message.
  const message = error instanceof Error ? error.message : String(error)
  return { status: { kind: 'error', text: t('status.failed', { message: errorText(error, t) }) }, message: { type: 'error', code: 'request_failed', message } }
}

export interface DraftOptions {
  flow: FlowDetail
  api: FlowApi
  /** Tells the host page (dirty, saved, published, error). */
  notify(message: EditorMessage): void
  /** The editor was started afresh on the draft saved meanwhile ("reload theirs"). */
  reloaded: boolean
  /** Starts the editor afresh on `flow`. */
  onReload(flow: FlowDetail): void
}

/** The draft on the service and what the editor does with it: save, publish, check, restore a version, roll back. */
export interface Draft {
  /** The document as the editor holds it, as JSON. */
  json: string
  /** It differs from the draft last saved. */
  dirty: boolean
  publishedVersion: number
  /** The version new sessions start on (after a rollback, older than the newest) and any gradual release. */
  release: Release
  /**
   * There is something new to publish: unsaved changes, or a saved draft other than the newest
   * version (also while that version is being read, or when it could not be).
   */
  publishable: boolean
  busy: 'saving' | 'publishing' | 'validating' | undefined
  status: Status | undefined
  dismissStatus(): void
  /** Set when a save found a newer draft: that draft's version, until the person chooses. */
  conflict: number | undefined
  /** Saves over the draft at `over` (by default the one this editor's changes are based on); false when it failed. */
  save(over?: number): Promise<boolean>
  /** Gives up this editor's changes for the draft saved meanwhile. */
  reloadTheirs(): Promise<void>
  /** Publishes the draft (saving it first); when the flow's tests must pass and some fail, answers those tests. */
  publish(): Promise<FailingTest[] | undefined>
  /** Makes a published version the one new sessions start on; false when it failed (the status line says why). */
  rollBack(version: number): Promise<boolean>
  /** Reads the flow's release and newest version again (someone may have published or rolled back meanwhile). */
  refreshRelease(): Promise<void>
  /** Checks the document as the editor holds it; its problems are shown on the graph. */
  validate(): Promise<'valid' | 'invalid' | 'failed'>
  /**
   * A published version's definition becomes the draft's content, as an unsaved change; the draft's
   * `requirePassingTests` stays as it is: publishing an older version again is when its tests matter.
   */
  restore(version: number, definition: FlowDefinition): void
}

/**
 * The draft's save, publish and check for the graph `flowGraph` holds. Ctrl/⌘+S saves from
 * anywhere, a form field included; the host hears when the draft starts and stops having unsaved
 * changes, and the browser asks before a page with unsaved changes is left.
 */
export function useDraft({ flow, api, notify, reloaded, onReload }: DraftOptions, flowGraph: FlowGraph): Draft {
  const t = useT()
  const { definition, showProblems, load } = flowGraph
  const json = useMemo(() => JSON.stringify(definition), [definition])
  const [savedJson, setSavedJson] = useState(() => JSON.stringify(toDefinition(flow.definition, toGraph(flow.definition))))
  const dirty = json !== savedJson
  const [publishedVersion, setPublishedVersion] = useState(flow.publishedVersion)
  const [release, setRelease] = useState(flow.release)
  // The newest version's document as the editor would save it, to compare the saved draft with.
  const [published, setPublished] = useState<{ version: number; definition: unknown }>()
  useEffect(() => {
    let current = true
    api.version(flow.id, publishedVersion).then(
      (definition) => current && setPublished({ version: publishedVersion, definition: JSON.parse(JSON.stringify(toDefinition(definition, toGraph(definition)))) }),
      () => undefined,
    )
    return () => {
      current = false
    }
  }, [api, flow.id, publishedVersion])
  // Publishing the newest version again puts it out for all: after a rollback, or during its gradual release.
  const publishable = useMemo(
    () =>
      dirty ||
      published?.version !== publishedVersion ||
      !sameJson(JSON.parse(savedJson), published.definition) ||
      release.liveVersion !== publishedVersion ||
      release.gradual !== null,
    [dirty, published, publishedVersion, savedJson, release],
  )
  const [busy, setBusy] = useState<Draft['busy']>()
  const [status, setStatus] = useState<Status | undefined>(() => (reloaded ? { kind: 'ok', text: t('status.reloaded') } : undefined))
  // The draft version this editor's changes are based on; a save sends it (If-Match).
  const draftVersion = useRef(flow.draftVersion)
  const [conflict, setConflict] = useState<number>()

  const failed = useCallback(
    (error: unknown, sent: FlowDefinition) => {
      const result = failure(error, sent, t)
      if (result.conflict !== undefined) setConflict(result.conflict)
      if (result.problems) showProblems(result.problems)
      setStatus(result.status)
      notify(result.message)
    },
    [notify, showProblems, t],
  )

  const save = useCallback(
    async (over = draftVersion.current): Promise<boolean> => {
      const sent = definition
      setBusy('saving')
      setStatus(undefined)
      try {
        const saved = await api.saveDraft(flow.id, sent, over)
        draftVersion.current = saved.draftVersion
        setConflict(undefined)
        setSavedJson(JSON.stringify(sent))
        showProblems(emptyProblems())
        setStatus({ kind: 'ok', text: t('status.draftSaved') })
        notify({ type: 'saved', flowId: flow.id, updatedAt: saved.updatedAt })
        return true
      } catch (error) {
        failed(error, sent)
        return false
      } finally {
        setBusy(undefined)
      }
    },
    [api, definition, failed, flow.id, notify, showProblems, t],
  )

  const reloadTheirs = useCallback(async () => {
    setBusy('saving')
    try {
      onReload(await api.flow(flow.id))
    } catch (error) {
      failed(error, definition)
      setBusy(undefined)
    }
  }, [api, definition, failed, flow.id, onReload])

  const publish = useCallback(async (): Promise<FailingTest[] | undefined> => {
    if (dirty && !(await save())) return undefined
    setBusy('publishing')
    try {
      const published = await api.publish(flow.id)
      const { version, publishedAt } = published
      setPublishedVersion(version)
      setRelease(published.release)
      showProblems(emptyProblems())
      setStatus({ kind: 'ok', text: t('status.publishedNow', { version }) })
      notify({ type: 'published', flowId: flow.id, version, publishedAt })
      return undefined
    } catch (error) {
      failed(error, definition)
      return error instanceof TestsFailedError ? error.failingTests : undefined
    } finally {
      setBusy(undefined)
    }
  }, [api, definition, dirty, failed, flow.id, notify, save, showProblems, t])

  const rollBack = useCallback(
    async (version: number): Promise<boolean> => {
      try {
        setRelease(await api.rollBack(flow.id, version))
        setStatus({ kind: 'ok', text: t('status.rolledBack', { version }) })
        return true
      } catch (error) {
        failed(error, definition)
        return false
      }
    },
    [api, definition, failed, flow.id, t],
  )

  const refreshRelease = useCallback(async () => {
    const found = await api.flow(flow.id).catch(() => undefined)
    if (!found) return
    setPublishedVersion(found.publishedVersion)
    setRelease((current) => (sameJson(current, found.release) ? current : found.release))
  }, [api, flow.id])

  const validate = useCallback(async (): Promise<'valid' | 'invalid' | 'failed'> => {
    const sent = definition
    setBusy('validating')
    try {
      const result = await api.validate(sent)
      showProblems(indexProblems(sent, forPeople(sent, result.problems, t)))
      setStatus(result.valid ? { kind: 'ok', text: t('status.valid') } : { kind: 'error', text: t('status.invalid', { count: result.problems.length }) })
      return result.valid ? 'valid' : 'invalid'
    } catch (error) {
      failed(error, sent)
      return 'failed'
    } finally {
      setBusy(undefined)
    }
  }, [api, definition, failed, showProblems, t])

  const restore = useCallback(
    (version: number, restored: FlowDefinition) => {
      load(withSetting(restored, 'requirePassingTests', definition.settings?.requirePassingTests))
      setStatus({ kind: 'ok', text: t('status.restored', { version }) })
    },
    [definition.settings?.requirePassingTests, load, t],
  )

  useCtrlKeys((event, key) => {
    if (key !== 's') return
    event.preventDefault()
    if (dirty && busy === undefined) void save()
  })

  useEffect(() => {
    notify({ type: 'dirty', flowId: flow.id, dirty })
    if (!dirty) return
    const guard = (event: BeforeUnloadEvent) => event.preventDefault()
    window.addEventListener('beforeunload', guard)
    return () => window.removeEventListener('beforeunload', guard)
  }, [dirty, flow.id, notify])

  const dismissStatus = useCallback(() => setStatus(undefined), [])

  return { json, dirty, publishedVersion, release, publishable, busy, status, dismissStatus, conflict, save, reloadTheirs, publish, rollBack, refreshRelease, validate, restore }
}
