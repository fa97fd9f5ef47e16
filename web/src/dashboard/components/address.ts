import { useLocation, useSearch } from 'wouter'

/**
 * A screen's filters and paging as the address's query string, so a screen can be linked to and
 * reloaded: `set` replaces the named ones (empty removes one) and keeps the rest.
 */
export function useQueryParams(): [URLSearchParams, (changes: Record<string, string | undefined>) => void] {
  const search = useSearch()
  const [location, navigate] = useLocation()
  const params = new URLSearchParams(search)
  const set = (changes: Record<string, string | undefined>) => {
    const next = new URLSearchParams(search)
    for (const [name, value] of Object.entries(changes)) {
      if (value === undefined || value === '') next.delete(name)
      else next.set(name, value)
    }
    const query = next.toString()
    navigate(query ? `${location}?${query}` : location)
  }
  return [params, set]
}

/** The zero-based page the address names in `name` (`page` unless a screen pages several lists). */
export const pageOf = (params: URLSearchParams, name = 'page'): number => Math.max(0, Number.parseInt(params.get(name) ?? '0', 10) || 0)

export const PAGE_SIZES = [10, 25, 50, 100] as const

/** The zero-based page and the page size the address asks for (the spec's defaults otherwise). */
export function pagingOf(params: URLSearchParams): { page: number; size: number } {
  const asked = Number.parseInt(params.get('size') ?? '', 10)
  return { page: pageOf(params), size: PAGE_SIZES.find((allowed) => allowed === asked) ?? PAGE_SIZES[0] }
}

/** A positive whole number the address names in `name`, if any. */
export function positiveOf(params: URLSearchParams, name: string): number | undefined {
  const value = Number.parseInt(params.get(name) ?? '', 10)
  return Number.isInteger(value) && value > 0 ? value : undefined
}

/** The address's value of `name` when it is one of `allowed`, so a hand-edited address cannot send a value the API refuses. */
export function oneOf<T extends string>(params: URLSearchParams, name: string, allowed: readonly T[]): T | undefined {
  const value = params.get(name)
  return allowed.find((candidate) => candidate === value)
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The API's id filters take UUIDs only: checked before asking, so the field says what is wrong. */
export const isUuid = (value: string): boolean => UUID.test(value)
