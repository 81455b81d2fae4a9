// Min/max-per-bucket downsampling of the step rows for a chart `width` pixels wide. A bucket is
// PIXELS_PER_BUCKET pixel columns; it keeps its first and last row and, for EVERY series, the row
// of its minimum and of its maximum, so no spike (a loss jump, a loss-scale drop, a throughput
// dip) is lost whichever chart draws it. The kept rows are a union of real row indices, so all columns stay aligned on
// real steps. Every overflowed step is kept too: the loss-scale chart marks each one.
import type { Column } from './seriesStore';

export interface RowSelection {
  /** Ascending row indices to send. */
  rows: Int32Array;
  /** Rows in the range before downsampling. */
  inRange: number;
  downsampled: boolean;
}

/** Below this many rows per pixel the range is sent whole. */
export const ROWS_PER_PIXEL = 2;
/** Two pixels per bucket: about 4 rows per pixel for six noisy series (fewer when series are
 * smooth), half the rows of one-pixel buckets, and a spike is still placed within 2 px. */
export const PIXELS_PER_BUCKET = 2;

/** First row index whose step is >= `step` (steps ascending). */
export function lowerBound(steps: Float64Array, n: number, step: number): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (steps[mid] < step) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The rows to draw for steps in [min, max] (null ends: the run's start or end) at `width` pixels.
 * `series` are the float columns (NaN = no value); `overflow` is 0/1.
 */
export function selectRows(
  steps: Column,
  series: readonly Column[],
  overflow: Column,
  range: { min: number | null; max: number | null },
  width: number,
): RowSelection {
  const n = steps.length;
  const from = range.min === null ? 0 : lowerBound(steps.data, n, range.min);
  const to = range.max === null ? n : lowerBound(steps.data, n, Math.floor(range.max) + 1);
  const count = Math.max(0, to - from);
  if (count <= Math.floor(width) * ROWS_PER_PIXEL) {
    const rows = new Int32Array(count);
    for (let i = 0; i < count; i++) rows[i] = from + i;
    return { rows, inRange: count, downsampled: false };
  }
  const buckets = Math.max(1, Math.floor(width / PIXELS_PER_BUCKET));
  const keep = new Uint8Array(count);
  const ov = overflow.data;
  for (let i = from; i < to; i++) if (ov[i]) keep[i - from] = 1;
  // bucket b holds rows [from + floor(b*count/buckets), from + floor((b+1)*count/buckets))
  for (let b = 0; b < buckets; b++) {
    const start = from + Math.floor((b * count) / buckets);
    const end = from + Math.floor(((b + 1) * count) / buckets);
    if (end <= start) continue;
    keep[start - from] = 1;
    keep[end - 1 - from] = 1;
    for (const col of series) {
      const d = col.data;
      let minI = -1;
      let maxI = -1;
      let nanI = -1;
      let minV = Infinity;
      let maxV = -Infinity;
      for (let i = start; i < end; i++) {
        const v = d[i];
        if (v < minV) {
          minV = v;
          minI = i;
        }
        if (v > maxV) {
          maxV = v;
          maxI = i;
        }
        if (v !== v && nanI < 0) nanI = i; // NaN
      }
      if (minI >= 0) keep[minI - from] = 1;
      if (maxI >= 0) keep[maxI - from] = 1;
      // a gap (NaN: a diverged loss) inside the bucket stays visible as a gap
      if (nanI >= 0) keep[nanI - from] = 1;
    }
  }
  let kept = 0;
  for (let i = 0; i < count; i++) kept += keep[i];
  const rows = new Int32Array(kept);
  for (let i = 0, j = 0; i < count; i++) if (keep[i]) rows[j++] = from + i;
  return { rows, inRange: count, downsampled: true };
}
