import { useId, useRef, useState, type DragEvent, type FormEvent } from 'react'
import { Link, useParams } from 'wouter'
import { api, unwrap } from '../../api'
import { useAsync } from '../../components/async'
import { ErrorNotice, Field, Loading, PageHeader } from '../../components/ui'
import { useT } from '../../i18n'
import { useQueryParams } from '../../components/address'
import { useValueFormatter } from './format'
import type { Card, Pipeline, Stage } from './api-types'
import { cardTitle, featuredValues, isNumeric, tagsFromInput } from './card-values'
import { StageChip } from './StageChip'

/** Cards a column shows at first, and how many more each "load more" adds. */
const COLUMN_PAGE = 20

interface Filters {
  q: string
  tags: string
}

/** What the board tells a moved card's mover: the card and the stage it went to. */
type MoveResult = { ok: true; title: string; stage: string } | { ok: false; error: unknown }

/** A pipeline's board: a column per stage, cards moved by dragging or with each card's "move to" choice. */
export function BoardScreen() {
  const t = useT()
  const { pipelineId } = useParams<{ pipelineId: string }>()
  const pipeline = useAsync(() => unwrap(api.GET('/v1/kanban/pipelines/{id}', { params: { path: { id: pipelineId } } })), [pipelineId])
  if (pipeline.error) return <ErrorNotice error={pipeline.error} onRetry={pipeline.reload} />
  if (!pipeline.data) return <Loading />
  return (
    <section>
      <PageHeader title={pipeline.data.name}>
        <Link href="/" className="button-link secondary">
          {t('kanban.board.allPipelines')}
        </Link>
        <Link href={`/${pipelineId}/edit`} className="button-link secondary">
          {t('kanban.board.editPipeline')}
        </Link>
      </PageHeader>
      <Board pipeline={pipeline.data} />
    </section>
  )
}

function Board({ pipeline }: { pipeline: Pipeline }) {
  const t = useT()
  const [params, setParams] = useQueryParams()
  const filters: Filters = { q: params.get('q') ?? '', tags: params.get('tags') ?? '' }
  // Bumped after a move: every column loads again, so counts and sums follow the card.
  const [version, setVersion] = useState(0)
  const [moveResult, setMoveResult] = useState<MoveResult>()
  const dragged = useRef<Card | undefined>(undefined)
  const stages = [...pipeline.stages].sort((a, b) => a.order - b.order)

  async function move(card: Card, stage: Stage) {
    if (card.stageId === stage.id) return
    const title = cardTitle(pipeline, card)
    try {
      await unwrap(api.PATCH('/v1/kanban/cards/{id}', { params: { path: { id: card.id } }, body: { stageId: stage.id } }))
      setMoveResult({ ok: true, title, stage: stage.name })
    } catch (error) {
      setMoveResult({ ok: false, error })
    }
    setVersion((v) => v + 1)
  }

  return (
    <>
      <SearchForm key={`${filters.q}\n${filters.tags}`} filters={filters} onSearch={(next) => setParams({ q: next.q.trim(), tags: tagsFromInput(next.tags).join(',') })} />
      <p role="status" className="kanban-status">
        {moveResult?.ok ? t('kanban.board.moved', { title: moveResult.title, stage: moveResult.stage }) : ''}
      </p>
      {moveResult && !moveResult.ok && <ErrorNotice error={moveResult.error} />}
      <div className="kanban-board">
        {stages.map((stage) => (
          <Column
            key={stage.id}
            pipeline={pipeline}
            stage={stage}
            stages={stages}
            filters={filters}
            version={version}
            onDragStart={(card) => (dragged.current = card)}
            onDropCard={(cardId) => {
              // Only the card this board started dragging: a file or text dropped from elsewhere moves nothing.
              const card = dragged.current
              dragged.current = undefined
              if (card?.id === cardId) void move(card, stage)
            }}
            onMove={(card, to) => void move(card, to)}
          />
        ))}
      </div>
    </>
  )
}

function SearchForm({ filters, onSearch }: { filters: Filters; onSearch(filters: Filters): void }) {
  const t = useT()
  const [q, setQ] = useState(filters.q)
  const [tags, setTags] = useState(filters.tags)
  const submit = (event: FormEvent) => {
    event.preventDefault()
    onSearch({ q, tags })
  }
  return (
    <form className="filters kanban-search" role="search" aria-label={t('kanban.board.searchLabel')} onSubmit={submit}>
      <Field label={t('kanban.board.q')}>{(props) => <input {...props} type="search" value={q} onChange={(event) => setQ(event.target.value)} />}</Field>
      <Field label={t('kanban.board.tags')} hint={t('kanban.board.tagsHint')}>
        {(props) => <input {...props} value={tags} onChange={(event) => setTags(event.target.value)} />}
      </Field>
      <div className="kanban-filter-buttons">
        <button type="submit">{t('common.search')}</button>
        {(filters.q || filters.tags) && (
          <button
            type="button"
            className="secondary"
            onClick={() => {
              setQ('')
              setTags('')
              onSearch({ q: '', tags: '' })
            }}
          >
            {t('common.clear')}
          </button>
        )}
      </div>
    </form>
  )
}

interface ColumnProps {
  pipeline: Pipeline
  stage: Stage
  stages: Stage[]
  filters: Filters
  version: number
  onDragStart(card: Card): void
  onDropCard(cardId: string): void
  onMove(card: Card, to: Stage): void
}

function Column({ pipeline, stage, stages, filters, version, onDragStart, onDropCard, onMove }: ColumnProps) {
  const t = useT()
  const format = useValueFormatter()
  const [shown, setShown] = useState(COLUMN_PAGE)
  const [dropping, setDropping] = useState(false)
  const cards = useAsync(
    () =>
      unwrap(
        api.GET('/v1/kanban/pipelines/{pipelineId}/cards', {
          params: { path: { pipelineId: pipeline.id }, query: { stageId: stage.id, q: filters.q || undefined, tags: filters.tags || undefined, size: shown } },
        }),
      ),
    [pipeline.id, stage.id, filters.q, filters.tags, shown, version],
  )
  const headingId = `kanban-stage-${stage.id}`
  const sums = pipeline.fields.filter(isNumeric).flatMap((field) => {
    const sum = cards.data?.aggregations[field.id]
    return sum === undefined ? [] : [{ field, sum }]
  })
  const dropTarget = {
    onDragOver: (event: DragEvent) => {
      event.preventDefault()
      event.dataTransfer.dropEffect = 'move'
      setDropping(true)
    },
    onDragLeave: () => setDropping(false),
    onDrop: (event: DragEvent) => {
      event.preventDefault()
      setDropping(false)
      onDropCard(event.dataTransfer.getData('text/plain'))
    },
  }

  return (
    <section className={dropping ? 'kanban-column dropping' : 'kanban-column'} aria-labelledby={headingId} data-stage-id={stage.id} {...dropTarget}>
      <header className="kanban-column-header" style={{ borderTopColor: stage.color }}>
        <h2 id={headingId}>
          <StageChip stage={stage} />
        </h2>
        {cards.data && (
          <div role="group" className="kanban-aggregations" aria-label={t('kanban.board.totalsOf', { stage: stage.name })}>
            <dl>
            <div>
              <dt>{t('kanban.board.count')}</dt>
              <dd>{cards.data.totalElements}</dd>
            </div>
            {sums.map(({ field, sum }) => (
              <div key={field.id}>
                <dt>{t('kanban.board.sumOf', { field: field.name })}</dt>
                <dd>{format(field, sum)}</dd>
              </div>
            ))}
            </dl>
          </div>
        )}
        <Link href={`/${pipeline.id}/cards/new?stageId=${stage.id}`} className="kanban-add" aria-label={t('kanban.board.addCardTo', { stage: stage.name })}>
          {t('kanban.board.addCard')}
        </Link>
      </header>
      {cards.error && <ErrorNotice error={cards.error} onRetry={cards.reload} />}
      {!cards.data && !cards.error && <Loading />}
      {cards.data && cards.data.content.length === 0 && <p className="empty kanban-empty">{t('kanban.board.noCards')}</p>}
      <ul className="kanban-cards">
        {cards.data?.content.map((card) => (
          <li key={card.id}>
            <CardTile pipeline={pipeline} card={card} stages={stages} onDragStart={() => onDragStart(card)} onMove={(to) => onMove(card, to)} />
          </li>
        ))}
      </ul>
      {cards.data && cards.data.totalElements > cards.data.content.length && (
        <button type="button" className="secondary kanban-more" disabled={cards.loading} onClick={() => setShown((n) => n + COLUMN_PAGE)}>
          {t('kanban.board.loadMore', { shown: cards.data.content.length, total: cards.data.totalElements })}
        </button>
      )}
    </section>
  )
}

function CardTile({ pipeline, card, stages, onDragStart, onMove }: { pipeline: Pipeline; card: Card; stages: Stage[]; onDragStart(): void; onMove(to: Stage): void }) {
  const t = useT()
  const format = useValueFormatter()
  const title = cardTitle(pipeline, card)
  const values = featuredValues(pipeline, card)
  return (
    <article
      className="kanban-card"
      draggable
      data-card-id={card.id}
      onDragStart={(event) => {
        event.dataTransfer.setData('text/plain', card.id)
        event.dataTransfer.effectAllowed = 'move'
        onDragStart()
      }}
    >
      <h3>
        <Link href={`/${pipeline.id}/cards/${card.id}`}>{title}</Link>
      </h3>
      {values.length > 0 && (
        <dl className="kanban-values">
          {values.map(({ field, value }) => (
            <div key={field.id}>
              <dt>{field.name}</dt>
              <dd>{format(field, value)}</dd>
            </div>
          ))}
        </dl>
      )}
      {card.tags.length > 0 && (
        <ul className="kanban-tags" aria-label={t('kanban.card.tags')}>
          {card.tags.map((tag) => (
            <li key={tag} className="badge">
              {tag}
            </li>
          ))}
        </ul>
      )}
      <MoveControl title={title} stageId={card.stageId} stages={stages} onMove={onMove} />
    </article>
  )
}

/**
 * The keyboard's way to move a card: choose the stage, then press Move (choosing alone moves
 * nothing, as arrow keys change a closed select's choice one step at a time).
 */
function MoveControl({ title, stageId, stages, onMove }: { title: string; stageId: string; stages: Stage[]; onMove(to: Stage): void }) {
  const t = useT()
  const id = useId()
  const [choice, setChoice] = useState(stageId)
  const target = stages.find((stage) => stage.id === choice && stage.id !== stageId)
  return (
    <div className="kanban-move">
      <label htmlFor={id}>{t('kanban.card.moveTo')}</label>
      <select id={id} aria-label={t('kanban.card.moveLabel', { title })} value={choice} onChange={(event) => setChoice(event.target.value)}>
        {stages.map((stage) => (
          <option key={stage.id} value={stage.id}>
            {stage.name}
          </option>
        ))}
      </select>
      <button type="button" className="secondary" disabled={!target} aria-label={t('kanban.card.moveButtonLabel', { title })} onClick={() => target && onMove(target)}>
        {t('kanban.card.moveButton')}
      </button>
    </div>
  )
}
