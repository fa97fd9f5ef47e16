import type { ReactNode } from 'react'
import type { Async } from './async'
import type { ListPage, PagedList } from './paged-list'
import { Empty, ErrorNotice, Loading, Pager } from './ui'

/** A column of a list's table: its header, and what each row shows in it. */
export interface Column<Item> {
  header: string
  cell(item: Item): ReactNode
  /** The class of the column's body cells. */
  className?: string
  /** The column names its row (a row header), so a screen reader says whose cell it reads. */
  namesRow?: boolean
}

interface TableProps<Item> {
  columns: Column<Item>[]
  items: Item[]
  rowKey(item: Item): string
  className?: string
  caption?: string
  /** The id of the heading that names the table, when it has no caption. */
  labelledBy?: string
  /** The row being edited: it shows `content` in one cell across the table instead of its cells. */
  editing?: { key: string; content: ReactNode }
  /** The row whose item the page shows beside the table. */
  current?: string
}

/** Rows of `items` under `columns`' headers. */
export function Table<Item>({ columns, items, rowKey, className, caption, labelledBy, editing, current }: TableProps<Item>) {
  return (
    <table className={className} aria-labelledby={labelledBy}>
      {caption && <caption>{caption}</caption>}
      <thead>
        <tr>
          {columns.map((column) => (
            <th key={column.header} scope="col">
              {column.header}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {items.map((item) => {
          const key = rowKey(item)
          return (
            <tr key={key} aria-current={key === current ? 'true' : undefined}>
              {editing?.key === key ? (
                <td colSpan={columns.length}>{editing.content}</td>
              ) : (
                columns.map((column) =>
                  column.namesRow ? (
                    <th key={column.header} scope="row" className={column.className}>
                      {column.cell(item)}
                    </th>
                  ) : (
                    <td key={column.header} className={column.className}>
                      {column.cell(item)}
                    </td>
                  ),
                )
              )}
            </tr>
          )
        })}
      </tbody>
    </table>
  )
}

type ListBody<Item> =
  | (Omit<TableProps<Item>, 'items' | 'caption'> & { caption?(page: ListPage<Item>): string })
  /** Items drawn otherwise than as a table's rows (cards, say). */
  | { children(items: Item[], page: ListPage<Item>): ReactNode }

/** What an empty list says when nothing is there yet: what it will hold, and how to make the first. */
export interface FirstSteps {
  /** "No flows yet: create your first flow". */
  title: string
  /** How the first one comes about. */
  hint?: ReactNode
  /** The way to make it (a link or button). */
  action?: ReactNode
}

type ListViewProps<Item> = ListBody<Item> & {
  /** The list's load: from `usePagedList` (then with a pager) or `useAsync`. */
  list: PagedList<Item> | Async<ListPage<Item> | undefined>
  /** What the list says when it holds nothing: a line, or what to do first. */
  empty?: string | FirstSteps
  /** Filters narrow the list: an empty one then says `noMatch` rather than `empty`. */
  filtered?: boolean
  noMatch?: string
  /** Shown while the first page loads (the loading line unless given). */
  loading?: ReactNode
}

/** A list of the API's, in every state: its failure with a retry, loading, empty, or its items (and a pager when it is paged). */
export function ListView<Item>({ list, empty, filtered = false, noMatch, loading = <Loading />, ...body }: ListViewProps<Item>) {
  if (list.error) return <ErrorNotice error={list.error} onRetry={list.reload} />
  if (!list.data) return <>{loading}</>
  const page = list.data
  if (page.totalElements === 0) return filtered && noMatch ? <Empty>{noMatch}</Empty> : typeof empty === 'object' ? <FirstStepsNotice {...empty} /> : <Empty>{empty}</Empty>
  return (
    <>
      {'children' in body ? body.children(page.content, page) : <Table {...body} items={page.content} caption={body.caption?.(page)} />}
      {'goTo' in list && <Pager page={list.page} totalPages={page.totalPages} totalElements={page.totalElements} onPage={list.goTo} />}
    </>
  )
}

function FirstStepsNotice({ title, hint, action }: FirstSteps) {
  return (
    <div className="empty first-steps" data-testid="first-steps">
      <p className="first-steps-title">{title}</p>
      {hint && <p className="first-steps-hint">{hint}</p>}
      {action && <div className="first-steps-action">{action}</div>}
    </div>
  )
}
