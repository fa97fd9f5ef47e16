import { channel } from 'node:diagnostics_channel'
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify'

export interface RegisteredRoute {
  method: string
  url: string
  schema: FastifySchema
}

const initialization = channel('fastify.initialization')

/**
 * Opens an app with `open` and answers it with every route it registered but HEAD (fastify derives
 * those from GET). `buildApp` registers its routes before it returns, and an `onRoute` hook only
 * sees routes registered after it; fastify publishes every new instance on the
 * `fastify.initialization` diagnostics channel before anything is registered, so a subscriber adds
 * the hook there.
 */
export async function withRoutes<T>(open: () => Promise<T>): Promise<T & { routes: RegisteredRoute[] }> {
  const routes: RegisteredRoute[] = []
  const collect = (message: unknown) => {
    ;(message as { fastify: FastifyInstance }).fastify.addHook('onRoute', (route: RouteOptions) => {
      for (const method of [route.method].flat()) if (method !== 'HEAD') routes.push({ method, url: route.url, schema: route.schema ?? {} })
    })
  }
  initialization.subscribe(collect)
  const opened = await open().finally(() => initialization.unsubscribe(collect))
  return { ...opened, routes }
}
