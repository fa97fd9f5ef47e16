import type { DependencyList } from 'react'
import { pageOf, pagingOf, useQueryParams } from './address'
import { useAsync, type Async } from './async'

/** A page of a list, as every list endpoint of the API answers. */
export interface ListPage<Item> {
  content: Item[]
  totalElements: number
  totalPages: number
}

/** A list loaded a page at a time: the page shown (zero-based, kept in the address) and a way to another. */
export interface PagedList<Item> extends Async<ListPage<Item> | undefined> {
  page: number
  goTo(page: number): void
}

/**
 * Loads the page and size the address asks for (`?page=&size=`, the spec's defaults otherwise),
 * again when they or `deps` change. A screen with two lists names the second one's page otherwise.
 */
export function usePagedList<Item>(
  load: (paging: { page: number; size: number }) => Promise<ListPage<Item> | undefined>,
  deps: DependencyList,
  pageParam = 'page',
): PagedList<Item> {
  const [params, setParams] = useQueryParams()
  const page = pageOf(params, pageParam)
  const { size } = pagingOf(params)
  const list = useAsync(() => load({ page, size }), [page, size, ...deps])
  return { ...list, page, goTo: (next) => setParams({ [pageParam]: String(next) }) }
}
