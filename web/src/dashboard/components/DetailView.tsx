import type { ReactNode } from 'react'
import { Link } from 'wouter'
import { ApiError } from '../api'
import type { Async } from './async'
import { ErrorNotice, Loading, PageHeader } from './ui'

/**
 * The page of one thing the API may not have: loading, then under its title and a way back, the
 * thing itself, that it was not found (a 404), or the failure with a retry.
 */
export function DetailView<Data>({
  detail,
  title,
  back,
  notFound,
  children,
}: {
  detail: Async<Data>
  title: string
  back: { href: string; label: string }
  notFound: string
  children(data: Data): ReactNode
}) {
  const page = (content: ReactNode) => (
    <section>
      <PageHeader title={title}>
        <Link href={back.href} className="button-link secondary">
          {back.label}
        </Link>
      </PageHeader>
      {content}
    </section>
  )
  const { data, error } = detail
  if (error instanceof ApiError && error.status === 404) return page(<p className="notice warn">{notFound}</p>)
  if (error) return page(<ErrorNotice error={error} onRetry={detail.reload} />)
  if (data === undefined) return <Loading />
  return page(children(data))
}

/** What a detail page knows of its thing, label by label. */
export function Facts({ facts }: { facts: [label: string, value: ReactNode][] }) {
  return (
    <dl className="facts">
      {facts.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  )
}
