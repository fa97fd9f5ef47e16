/** Nearest-rank percentile of ascending `sorted` values (p in 0..100). */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN
  const rank = Math.ceil((p / 100) * sorted.length)
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!
}

export interface LatencySummary {
  count: number
  p50: number
  p90: number
  p99: number
  max: number
  mean: number
}

/** Summary of latencies (any unit; the caller names it). Sorts `values` in place. */
export function summarize(values: Float64Array | number[]): LatencySummary {
  const sorted = values instanceof Float64Array ? values.sort() : Float64Array.from(values).sort()
  let sum = 0
  for (const v of sorted) sum += v
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1]! : Number.NaN,
    mean: sorted.length ? sum / sorted.length : Number.NaN,
  }
}

/** A growable list of doubles without boxing every value. */
export class Samples {
  private data = new Float64Array(1 << 16)
  length = 0

  push(value: number): void {
    if (this.length === this.data.length) {
      const bigger = new Float64Array(this.data.length * 2)
      bigger.set(this.data)
      this.data = bigger
    }
    this.data[this.length++] = value
  }

  values(): Float64Array {
    return this.data.slice(0, this.length)
  }
}

export const round = (value: number, digits = 1) => {
  const f = 10 ** digits
  return Math.round(value * f) / f
}
