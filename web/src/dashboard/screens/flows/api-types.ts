import type { JsonOf, paths } from '../../api'

export type FlowItem = JsonOf<paths['/v1/flows']['get']['responses'][200]>['content'][number]
export type FlowDetail = JsonOf<paths['/v1/flows/{id}']['get']['responses'][200]>
export type Definition = FlowDetail['definition']
export type DefinitionNode = Definition['nodes'][number]
export type VersionItem = JsonOf<paths['/v1/flows/{id}/versions']['get']['responses'][200]>['content'][number]
export type VersionDetail = JsonOf<paths['/v1/flows/{id}/versions/{version}']['get']['responses'][200]>
export type FlowAnalytics = JsonOf<paths['/v1/flows/{id}/analytics']['get']['responses'][200]>
export type NodeAnalytics = FlowAnalytics['nodes'][number]
export type BranchAnalytics = FlowAnalytics['branches'][number]

/** The filters of GET /v1/flows, as the API names their values. */
export const DATE_RANGES = ['today', 'last7days', 'last15days', 'last30days'] as const
export type DateRange = (typeof DATE_RANGES)[number]
export const FLOW_ORDER_COLUMNS = ['createdAt', 'updatedAt', 'name'] as const
export const DIRECTIONS = ['ASC', 'DESC'] as const

/** Days a date range covers, today included (the API counts calendar days the same way). */
export const DAYS_IN_RANGE: Record<DateRange, number> = { today: 1, last7days: 7, last15days: 15, last30days: 30 }

export type ConversationTest = JsonOf<paths['/v1/flows/{id}/tests']['get']['responses'][200]>['content'][number]
/** A test as it is written and saved (`POST /v1/flows/{id}/tests`), as a session turns into one. */
export type TestBody = JsonOf<paths['/v1/sessions/{sessionId}/test']['get']['responses'][200]>['test']
export type TestStep = TestBody['steps'][number]
export type Expectation = NonNullable<TestBody['start']>
export type ExpectedMessage = NonNullable<Expectation['messages']>[number]
export type TextMatch = NonNullable<ExpectedMessage['text']>
export type TestRun = JsonOf<paths['/v1/flows/{id}/test-runs']['post']['responses'][200]>
export type TestResult = TestRun['tests'][number]
export type StepResult = TestResult['steps'][number]
export type TestProblem = StepResult['problems'][number]

export type Release = FlowDetail['release']
/** A change of the versions new sessions start on, with the release it left (`GET /v1/flows/{id}/releases`). */
export type ReleaseChange = JsonOf<paths['/v1/flows/{id}/releases']['get']['responses'][200]>['content'][number]
export type VersionFigures = JsonOf<paths['/v1/flows/{id}/analytics/versions']['get']['responses'][200]>['versions'][number]
export type ReplaySummary = JsonOf<paths['/v1/flows/{id}/replays']['get']['responses'][200]>['content'][number]
export type ReplayDetail = JsonOf<paths['/v1/flows/{id}/replays/{replayId}']['get']['responses'][200]>
export type DifferingSession = ReplayDetail['differing'][number]
export type TurnSide = DifferingSession['recorded']
export type ReplayStatusChoice = NonNullable<ReplayDetail['selection']['status']>
/** The most sessions a replay plays, and how many unless told (src/domain/replay.ts's REPLAY_LIMITS). */
export const REPLAY_SESSIONS = { most: 5000, unlessTold: 200 } as const
