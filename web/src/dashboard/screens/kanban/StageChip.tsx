import type { Stage } from './api-types'

/** A stage's name beside a swatch of its colour (the name carries the meaning; the colour only marks it). */
export function StageChip({ stage }: { stage: Pick<Stage, 'name' | 'color'> }) {
  return (
    <span className="kanban-chip">
      <span className="kanban-swatch" style={{ background: stage.color }} aria-hidden="true" />
      {stage.name}
    </span>
  )
}
