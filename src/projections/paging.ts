import type { SelectQueryBuilder } from 'kysely'

/** A zero-based page of a list: `size` rows from row `page * size`. */
export interface Paging {
  page: number
  size: number
}

/** A list's page as its query function returns it: the page's items and how many rows match in all. */
export interface ListPage<Item> {
  content: Item[]
  totalElements: number
}

/** The order a list's `direction` asks for, as kysely spells it. */
export const sqlDirection = (direction: 'ASC' | 'DESC') => (direction === 'DESC' ? 'desc' : 'asc')

/** How many rows a list's filtered query matches, for the page envelope's `totalElements`. */
export async function countRows<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>): Promise<number> {
  const row = await query
    .clearSelect()
    .select((eb) => eb.fn.countAll<string | number>().as('total'))
    .executeTakeFirstOrThrow()
  return Number((row as { total: string | number }).total)
}

/** Limits a list query to one zero-based page; use with `$call`. */
export const onePage =
  ({ page, size }: Paging) =>
  <Q extends { limit(n: number): Q; offset(n: number): Q }>(query: Q): Q =>
    query.limit(size).offset(page * size)

/** A list's rows selected and in its order, before they are cut to a page. */
interface OrderedRows<Row> {
  limit(n: number): OrderedRows<Row>
  offset(n: number): OrderedRows<Row>
  execute(): Promise<Row[]>
}

/**
 * One page of a list: the page's rows of `ordered` as items, and how many rows `matching` (the
 * list's filters, before any select or order) holds, read at once.
 */
export async function listPage<DB, TB extends keyof DB, O, Row, Item>(
  rows: { matching: SelectQueryBuilder<DB, TB, O>; ordered: OrderedRows<Row> },
  paging: Paging,
  toItem: (row: Row) => Item,
): Promise<ListPage<Item>> {
  const [page, totalElements] = await Promise.all([onePage(paging)(rows.ordered).execute(), countRows(rows.matching)])
  return { content: page.map(toItem), totalElements }
}
