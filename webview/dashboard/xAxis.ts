// The x axis in other units than steps: epochs (step / steps_per_epoch) or the wall-clock time
// since the run started (each step row's event time). The charts keep steps as their x data (the
// host's zoom and downsampling, the shared cursor and the markers all work in steps); these ticks
// put labels in the chosen unit at the steps where round values of it fall. Epochs are linear in
// steps; wall-clock time is not (a slow epoch, a pause before a resume), so its ticks are unevenly
// spaced where the pace changed: they read the time each step was reached. No DOM: node-testable.
import type { StepBlock } from '../../src/shared/dashboardProtocol';
import { formatDuration } from './series';

export type XAxisMode = 'step' | 'epoch' | 'time';

/** An x axis labelled in other units than the steps its data keeps (ticks at steps, labels in the unit). */
export interface XTicks {
  /** Tick positions (steps) within [min, max]. */
  splits(min: number, max: number, width: number): number[];
  label(step: number): string;
}

/** Pixels between ticks at least. */
const MIN_GAP_PX = 70;
const EPOCH_INCRS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 1, 2, 5, 10, 20, 25, 50, 100, 200, 500, 1000, 2000, 5000];
const TIME_INCRS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400];

function pick(incrs: readonly number[], span: number, width: number): number {
  const most = Math.max(1, Math.floor(width / MIN_GAP_PX));
  return incrs.find((d) => span / d <= most) ?? incrs[incrs.length - 1] * Math.ceil(span / most / incrs.at(-1)!);
}

export function epochTicks(stepsPerEpoch: number): XTicks {
  return {
    splits(min, max, width) {
      const span = (max - min) / stepsPerEpoch;
      // whole epochs once two or more show; fractions only zoomed into an epoch or two
      const d = pick(span >= 2 ? EPOCH_INCRS.filter((e) => e >= 1) : EPOCH_INCRS, span, width) * stepsPerEpoch;
      const out: number[] = [];
      for (let k = Math.ceil(min / d - 1e-9); k * d <= max + 1e-9 && out.length < 1000; k++) out.push(k * d);
      return out;
    },
    label: (step) => String(Number((step / stepsPerEpoch).toFixed(2))),
  };
}

/** The wall-clock axis from the step rows' times; null without times (an older host or runner). */
export function timeTicks(s: StepBlock, startedAt: number | undefined): XTicks | null {
  const ts = s.t;
  if (!ts || ts.length === 0) return null;
  const steps = s.steps;
  const t0 = startedAt ?? ts[0];
  // step -> seconds since start, linear between rows; before the first row: from 0 at step 0
  const elapsed = (step: number): number => {
    let lo = 0;
    let hi = steps.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (steps[mid] < step) lo = mid + 1;
      else hi = mid;
    }
    if (lo >= steps.length) return ts[steps.length - 1] - t0;
    const [s1, e1] = [steps[lo], ts[lo] - t0];
    const [s0, e0] = lo > 0 ? [steps[lo - 1], ts[lo - 1] - t0] : [0, 0];
    return s1 === s0 ? e1 : e0 + ((step - s0) / (s1 - s0)) * (e1 - e0);
  };
  // seconds -> the step reached then (the inverse, times being non-decreasing)
  const stepAt = (sec: number): number => {
    let lo = 0;
    let hi = steps.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (ts[mid] - t0 < sec) lo = mid + 1;
      else hi = mid;
    }
    if (lo >= steps.length) return steps[steps.length - 1];
    const [s1, e1] = [steps[lo], ts[lo] - t0];
    const [s0, e0] = lo > 0 ? [steps[lo - 1], ts[lo - 1] - t0] : [0, 0];
    return e1 === e0 ? s1 : s0 + ((sec - e0) / (e1 - e0)) * (s1 - s0);
  };
  return {
    splits(min, max, width) {
      const a = elapsed(min);
      const b = elapsed(max);
      const d = pick(TIME_INCRS, Math.max(b - a, 1), width);
      const out: number[] = [];
      for (let k = Math.ceil(a / d); k * d <= b && out.length < 1000; k++) {
        const step = stepAt(k * d);
        if (step >= min && step <= max && (out.length === 0 || step > out[out.length - 1])) out.push(step);
      }
      return out;
    },
    label: (step) => formatDuration(elapsed(step)),
  };
}
