import type { Projection } from '../../src/projections/projection.js'
import { webhookOutboxProjection } from '../../src/webhooks/outbox.js'

/**
 * The webhook outbox, each of its folds held until `opened` resolves once it has events (`onStart`
 * tells when one is): a rebuild or a retry through it stops there while a test acts beside it.
 */
export function heldOutbox(opened: Promise<void>, onStart: () => void): Projection {
  const fold = webhookOutboxProjection.fold!
  return {
    ...webhookOutboxProjection,
    fold: (options) => {
      const inner = fold(options)
      return {
        add: async (db, events) => {
          onStart()
          await opened
          await inner.add(db, events)
        },
        get rowsHeld() {
          return inner.rowsHeld
        },
        write: (trx) => inner.write(trx),
      }
    },
  }
}

/** A gate for {@link heldOutbox}: `open` lets it go, `reached` tells whether a fold waits at it. */
export function outboxGate() {
  let open = () => {}
  const gate = new Promise<void>((resolve) => (open = resolve))
  let reached = false
  return { projection: heldOutbox(gate, () => (reached = true)), open: () => open(), reached: () => reached }
}
