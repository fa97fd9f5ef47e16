import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { EditorAuth } from '../../auth/editor-auth.js'
import { security, type Tag } from '../openapi.js'
import { errorResponses } from '../schemas.js'
import { acceptEmptyJson } from '../empty-json.js'

export const openApiTag: Tag = { name: 'auth', description: "The embedded editor's sign-in (spec §5.2), outside /v1" }

const TokenResponse = Type.Object({
  access_token: Type.String({ description: 'a JWT for `Authorization: Bearer …` on the editor routes of /v1' }),
  refresh_token: Type.String({ description: 'good for one POST /auth/refresh; reusing it revokes every token of its family' }),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer({ description: 'seconds the access token is valid', examples: [900] }),
})

const Token = Type.String({ minLength: 1, maxLength: 512 })

/** The embedded editor's authentication, outside `/v1` (spec §4.7, §5.2). */
export const routes =
  (editorAuth: EditorAuth): FastifyPluginAsyncTypebox =>
  async (app) => {
    // The iframe-token call may send `Content-Type: application/json` with no body at all.
    acceptEmptyJson(app)
    // Credentials must never be cached on the way (RFC 6749 §5.1).
    app.addHook('onSend', async (_request, reply) => {
      void reply.header('cache-control', 'no-store')
    })

    app.post(
      '/auth/iframe-token',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'createIframeToken',
          summary: "Step 1, from the customer's backend: trade the OAuth client's credentials for a one-time token",
          description: 'Header `Authorization: Basic base64(clientId:clientSecret)`. The token is valid 60 seconds, for one exchange.',
          security: security.oauthClient,
          headers: Type.Object({ authorization: Type.Optional(Type.String()) }),
          body: Type.Object({}, { description: 'empty or absent', examples: [{}] }),
          response: { 200: Type.Object({ ott: Type.String() }), ...errorResponses(400, 401, 413, 415) },
        },
        preValidation: async (request) => {
          request.body ??= {}
        },
      },
      async (request) => ({ ott: await editorAuth.issueOneTimeToken(request.headers.authorization) }),
    )

    app.post(
      '/auth/exchange',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'exchangeIframeToken',
          summary: 'Step 2, from the editor: trade the one-time token, once, for an access and a refresh token',
          description: 'The editor (in the customer\'s iframe) trades the one-time token from step 1, valid 60 seconds and for one exchange only, for an access token and a refresh token; a used, expired or unknown one answers 401.',
          body: Type.Object({ ott: Token }, { examples: [{ ott: 'Jm3zQ0o2b5cJ1Zl9nq8x4Wb7yT0aVhR2kLpE6uF1sD0' }] }),
          response: { 200: TokenResponse, ...errorResponses(400, 401, 413, 415) },
        },
      },
      async (request) => editorAuth.exchange(request.body.ott),
    )

    app.post(
      '/auth/refresh',
      {
        schema: {
          tags: [openApiTag.name],
          operationId: 'refreshEditorTokens',
          summary: 'A new access and refresh token for a refresh token, which is used up',
          description: 'Rotates the editor\'s tokens. The refresh token is used up: presenting it again answers 401 and revokes its whole family, as a stolen token would.',
          body: Type.Object({ refresh_token: Token }, { examples: [{ refresh_token: 'r1.Xk9bQ2mW7vL0pA4sD8fG3hJ6kZ1xC5nB9mV2qW4eR7tY' }] }),
          response: { 200: TokenResponse, ...errorResponses(400, 401, 413, 415) },
        },
      },
      async (request) => editorAuth.refresh(request.body.refresh_token),
    )
  }
