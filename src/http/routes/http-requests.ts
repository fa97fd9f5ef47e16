import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Value } from '@sinclair/typebox/value'
import { interpolator } from '../../domain/interpolate.js'
import { buildRequest, schema as HttpRequestData } from '../../domain/nodes/http-request.js'
import { HttpCallAnswer, HttpCallRequest } from '../../domain/outside-call.js'
import { VariableValue } from '../../domain/turn.js'
import { makeCall } from '../../engine/outside-calls.js'
import { BadRequestError } from '../../errors.js'
import type { AppDeps } from '../app.js'
import { outsideCallSettings } from '../context.js'
import type { Tag } from '../openapi.js'
import { errorResponses } from '../schemas.js'

export const openApiTag: Tag = { name: 'http-requests', description: "Calls a flow's httpRequest node makes, tried once from the editor" }

const TriedCall = Type.Object({
  /** As sent, each secret written `{{secrets.NAME}}`. */
  request: HttpCallRequest,
  answer: HttpCallAnswer,
  durationMs: Type.Integer({ minimum: 0 }),
})

export const routes =
  (deps: AppDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const calls = outsideCallSettings(app, deps)

    app.post(
      '/http-requests/try',
      {
        config: { editor: true },
        schema: {
          tags: [openApiTag.name],
          operationId: 'tryHttpRequest',
          summary: "Make an httpRequest node's call once and see the answer",
          description:
            "Fills the node's templates with the sample `variables` and the workspace's secrets, makes the call as a session would (the same address checks, timeout and size limit) and answers what came back, recorded nowhere. 400 when the node's data is not an httpRequest's or its URL is not https once filled in.",
          body: Type.Object({
            request: Type.Unsafe<Record<string, unknown>>({ ...HttpRequestData, description: "the node's data" }),
            variables: Type.Optional(Type.Record(Type.String(), VariableValue, { description: 'sample values of the variables the templates read' })),
          }, {
            examples: [{
              request: { method: 'GET', url: 'https://shop.example.com/orders/{{order}}', headers: [{ name: 'Authorization', value: 'Bearer {{secrets.shop}}' }], saveResponse: [{ path: '$.status', variable: 'status' }] },
              variables: { order: '1234' },
            }],
          }),
          response: { 200: TriedCall, ...errorResponses(400, 401, 403) },
        },
      },
      async (request) => {
        const data = request.body.request
        if (!Value.Check(HttpRequestData, data)) throw new BadRequestError('body/request is not the data of an httpRequest node')
        const scope = { system: {}, variables: request.body.variables ?? {} }
        const built = buildRequest(data, { scope: () => scope, interpolating: (use, options) => use(interpolator(scope, options).text) })
        if (typeof built === 'string') throw new BadRequestError(built)
        const { request: sent, answer, durationMs } = await makeCall(calls, { workspaceId: request.principal.workspaceId, index: 0, nodeId: 'try', request: built }, deps.logger)
        return { request: sent, answer, durationMs }
      },
    )
  }
