// The single-run charts' derived columns (loss joined with eval loss on one x, the smoothed loss,
// overflow markers and counts per window), kept between renders and extended in place when the
// host appends rows, so that a live append costs the new rows, not all of them. Anything that is
// not a plain extension (a snapshot, a new smoothing, an eval at a step the x axis lacks) rebuilds
// them from the run's columns. No DOM here, so node tests can check it against series.ts.
import type { EvalBlock, StepBlock } from '../../src/shared/dashboardProtocol';
import { joinOnX, overflowMarkers, overflowsInWindow, smooth } from './series';

type Col = (number | null)[];

const percent = (v: number | null | undefined): number | null => (v === null || v === undefined ? null : v * 100);

/** First index i with xs[i] >= v (xs ascending). */
function lowerBound(xs: readonly number[], v: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (xs[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class SingleRunColumns {
  /** Loss chart: [x, loss, smoothed, eval loss] on the union of step and eval steps. */
  readonly loss: [number[], Col, Col, Col] = [[], [], [], []];
  /** Loss-scale chart's derived columns, one per step row. */
  readonly markers: Col = [];
  readonly overflowCounts: number[] = [];
  /** Accuracy chart's y columns (per cent), one per eval row: top-1, top-5 and the EMA weights' top-1. */
  readonly accPercent: Col = [];
  readonly top5Percent: Col = [];
  readonly emaPercent: Col = [];

  /** Whether the last update rebuilt the columns (else it only appended rows, or did nothing). */
  rebuilt = false;

  private steps?: StepBlock;
  private evals?: EvalBlock;
  private weight = NaN;
  private window = NaN;
  /** Rows of the run's columns already in the derived ones. */
  private stepRows = 0;
  private evalRows = 0;
  /** Smoothing's running state (see series.smooth). */
  private acc = 0;
  private n = 0;
  /** Overflowed steps so far, and the first of them still inside the window of the last row. */
  private marks: number[] = [];
  private lo = 0;

  /**
   * Brings the columns up to date with the run's (which only grow between snapshots). Returns what
   * changed: the step-derived columns, the eval-derived ones.
   */
  update(s: StepBlock, e: EvalBlock, weight: number, window: number): { steps: boolean; evals: boolean } {
    if (
      s !== this.steps ||
      e !== this.evals ||
      weight !== this.weight ||
      window !== this.window ||
      s.steps.length < this.stepRows ||
      e.steps.length < this.evalRows
    ) {
      this.rebuild(s, e, weight, window);
      this.rebuilt = true;
      return { steps: true, evals: true };
    }
    const newSteps = s.steps.length > this.stepRows;
    const newEvals = e.steps.length > this.evalRows;
    this.rebuilt = (newSteps || newEvals) && !this.extend(s, e);
    if (this.rebuilt) this.rebuild(s, e, weight, window);
    return { steps: newSteps, evals: newEvals };
  }

  private rebuild(s: StepBlock, e: EvalBlock, weight: number, window: number): void {
    this.steps = s;
    this.evals = e;
    this.weight = weight;
    this.window = window;
    const smoothed = smooth(s.loss, weight);
    const [x, loss, sm, evalLoss] = joinOnX([
      { x: s.steps, ys: [s.loss, smoothed] },
      { x: e.steps, ys: [e.valLoss] },
    ]);
    replace(this.loss[0], x);
    replace(this.loss[1], loss);
    replace(this.loss[2], sm);
    replace(this.loss[3], evalLoss);
    replace(this.markers, overflowMarkers(s));
    replace(this.overflowCounts, overflowsInWindow(s.steps, s.overflow, window));
    replace(
      this.accPercent,
      e.valAcc.map((v) => (v === null ? null : v * 100)),
    );
    replace(
      this.top5Percent,
      e.steps.map((_, i) => percent(e.valTop5?.[i])),
    );
    replace(
      this.emaPercent,
      e.steps.map((_, i) => percent(e.valAccEma?.[i])),
    );
    // The smoothing and window state at the last row, for later appends.
    const w = Math.min(Math.max(weight, 0), 0.999);
    this.acc = 0;
    this.n = 0;
    for (const v of s.loss) {
      if (v === null || !Number.isFinite(v)) continue;
      this.acc = this.acc * w + (1 - w) * v;
      this.n++;
    }
    this.marks = [];
    for (let i = 0; i < s.steps.length; i++) for (let k = 0; k < s.overflow[i]; k++) this.marks.push(s.steps[i]);
    const last = s.steps.length ? s.steps[s.steps.length - 1] : -Infinity;
    this.lo = 0;
    while (this.lo < this.marks.length && this.marks[this.lo] <= last - Math.max(1, window)) this.lo++;
    this.stepRows = s.steps.length;
    this.evalRows = e.steps.length;
  }

  /** Appends the new rows; false when they do not simply extend the columns (then: rebuild). */
  private extend(s: StepBlock, e: EvalBlock): boolean {
    const [x, loss, sm, evalLoss] = this.loss;
    const lastStep = this.stepRows ? s.steps[this.stepRows - 1] : -Infinity;
    for (let i = this.stepRows; i < s.steps.length; i++)
      if (s.steps[i] <= (i > this.stepRows ? s.steps[i - 1] : lastStep)) return false;
    for (let i = this.evalRows + 1; i < e.steps.length; i++) if (e.steps[i] <= e.steps[i - 1]) return false;
    // Evals at a step the x axis already has (the eval of a step row that came earlier) go in
    // place; one between existing x values would need an insertion: rebuild.
    const lastX = x.length ? x[x.length - 1] : -Infinity;
    let ei = this.evalRows;
    for (; ei < e.steps.length && e.steps[ei] <= lastX; ei++) {
      const at = lowerBound(x, e.steps[ei]);
      if (x[at] !== e.steps[ei]) return false;
    }
    for (let i = this.evalRows; i < ei; i++) evalLoss[lowerBound(x, e.steps[i])] = e.valLoss[i] ?? null;
    // New step rows must come after every x (steps ascending); merge them with the newer evals.
    let si = this.stepRows;
    if (si < s.steps.length && s.steps[si] <= lastX) return false;
    const w = Math.min(Math.max(this.weight, 0), 0.999);
    while (si < s.steps.length || ei < e.steps.length) {
      const sx = si < s.steps.length ? s.steps[si] : Infinity;
      const ex = ei < e.steps.length ? e.steps[ei] : Infinity;
      const xv = Math.min(sx, ex);
      x.push(xv);
      if (sx === xv) {
        const v = s.loss[si];
        loss.push(v ?? null);
        if (v === null || v === undefined || !Number.isFinite(v)) sm.push(null);
        else {
          this.acc = this.acc * w + (1 - w) * v;
          this.n++;
          sm.push(w === 0 ? v : this.acc / (1 - Math.pow(w, this.n)));
        }
        si++;
      } else {
        loss.push(null);
        sm.push(null);
      }
      if (ex === xv) {
        evalLoss.push(e.valLoss[ei] ?? null);
        ei++;
      } else evalLoss.push(null);
    }
    // Loss-scale chart: markers and overflows in the window ending at each new row.
    const win = Math.max(1, this.window);
    for (let i = this.stepRows; i < s.steps.length; i++) {
      const step = s.steps[i];
      this.markers.push(s.overflow[i] > 0 ? s.lossScale[i] : null);
      for (let k = 0; k < s.overflow[i]; k++) this.marks.push(step); // a sink's overflows, at its last step
      while (this.lo < this.marks.length && this.marks[this.lo] <= step - win) this.lo++;
      this.overflowCounts.push(this.marks.length - this.lo);
    }
    for (let i = this.evalRows; i < e.steps.length; i++) {
      const v = e.valAcc[i];
      this.accPercent.push(v === null || v === undefined ? null : v * 100);
      this.top5Percent.push(percent(e.valTop5?.[i]));
      this.emaPercent.push(percent(e.valAccEma?.[i]));
    }
    this.stepRows = s.steps.length;
    this.evalRows = e.steps.length;
    return true;
  }
}

/** Replaces an array's contents, keeping the array (the charts hold it). */
function replace<T>(into: T[], from: readonly T[]): void {
  into.length = 0;
  for (const v of from) into.push(v);
}
