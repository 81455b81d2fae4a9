// Pure computations on the columns the host sends: smoothing, overflow counts per window, CSV,
// and the number/time formats the UI shows. No DOM here, so node tests can run it.
import type { EvalBlock, RunData, StepBlock } from '../../src/shared/dashboardProtocol';
import * as l10n from '../shared/l10n';
import { localNumber } from './words';

/**
 * Exponential moving average, debiased like TensorBoard's smoothing: `weight` 0 is the raw series,
 * 0.99 very smooth. Nulls (NaN losses) stay null and do not poison later points.
 */
export function smooth(values: readonly (number | null)[], weight: number): (number | null)[] {
  const w = Math.min(Math.max(weight, 0), 0.999);
  const out: (number | null)[] = new Array(values.length);
  let acc = 0;
  let n = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v === null || !Number.isFinite(v)) {
      out[i] = null;
      continue;
    }
    acc = acc * w + (1 - w) * v;
    n++;
    out[i] = w === 0 ? v : acc / (1 - Math.pow(w, n));
  }
  return out;
}

/**
 * For each row, how many overflowed steps lie in (step - window, step]. Rows may be downsampled,
 * but the host keeps every row with an overflow, so the count is exact; a sink row's overflows
 * (`overflow` counts them) are placed at its last step.
 */
export function overflowsInWindow(steps: readonly number[], overflow: readonly number[], window: number): number[] {
  const w = Math.max(1, window);
  const marks: number[] = [];
  for (let i = 0; i < steps.length; i++) for (let k = 0; k < overflow[i]; k++) marks.push(steps[i]);
  const out: number[] = new Array(steps.length);
  let lo = 0;
  let hi = 0;
  for (let i = 0; i < steps.length; i++) {
    const s = steps[i];
    while (hi < marks.length && marks[hi] <= s) hi++;
    while (lo < hi && marks[lo] <= s - w) lo++;
    out[i] = hi - lo;
  }
  return out;
}

/** The loss scale at rows with an overflow (a sink's: any of its steps), null elsewhere: the chart's markers. */
export function overflowMarkers(block: Pick<StepBlock, 'lossScale' | 'overflow' | 'loss'>): (number | null)[] {
  return block.overflow.map((o, i) => (o > 0 ? block.lossScale[i] : null));
}

/**
 * The block with each sink row (one event for several steps: Ascend's sink mode, `firstStep` set)
 * drawn as the range it covers: two rows, at its first and at its last step, with the row's values
 * (the loss being the sink's mean), so that every step chart draws it flat across its steps rather
 * than as one point at its end. The overflow count stays on the last row (counted once). A block
 * without sinks comes back as it is.
 */
export function spanSinks(b: StepBlock): StepBlock {
  const first = b.firstStep;
  if (!first) return b;
  // Every per-row column but the axis, the overflow count and firstStep itself (trainAcc and t
  // when the host sends them): a sink's values stand for each of its steps.
  const cols = (Object.keys(b) as (keyof StepBlock)[]).filter(
    (k) => k !== 'steps' && k !== 'overflow' && k !== 'firstStep' && Array.isArray(b[k]),
  );
  const out = { steps: [], overflow: [] } as unknown as StepBlock;
  const o = out as unknown as Record<string, unknown[]>;
  const src = b as unknown as Record<string, unknown[]>;
  for (const k of cols) o[k] = [];
  const row = (i: number, step: number, overflow: number) => {
    out.steps.push(step);
    out.overflow.push(overflow);
    for (const k of cols) o[k].push(src[k][i]);
  };
  for (let i = 0; i < b.steps.length; i++) {
    const f = first[i];
    const prev = out.steps.length ? out.steps[out.steps.length - 1] : -Infinity;
    if (f !== null && f !== undefined && f < b.steps[i] && f > prev) row(i, f, 0);
    row(i, b.steps[i], b.overflow[i]);
  }
  return out;
}

/**
 * Aligns several (x ascending, ys) tables on the union of their x values, like uPlot.join, with
 * null where a table has no row for that x.
 */
export function joinOnX(
  tables: { x: readonly number[]; ys: readonly (readonly (number | null)[])[] }[],
): [number[], ...(number | null)[][]] {
  const xs = [...new Set(tables.flatMap((t) => t.x))].sort((a, b) => a - b);
  const index = new Map(xs.map((x, i) => [x, i]));
  const cols: (number | null)[][] = [];
  for (const t of tables) {
    for (const y of t.ys) {
      const col: (number | null)[] = new Array(xs.length).fill(null);
      for (let i = 0; i < t.x.length; i++) col[index.get(t.x[i])!] = y[i] ?? null;
      cols.push(col);
    }
  }
  return [xs, ...cols];
}

const CSV_COLUMNS = [
  'step',
  'loss',
  'lr',
  'loss_scale',
  'overflow',
  'img_per_s',
  'step_ms',
  'data_ms',
  'epoch',
  'val_loss',
  'val_acc',
] as const;

function csvCell(v: string | number | null | undefined): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : '';
  // Quote when needed; a leading = + - @ would be a formula in a spreadsheet.
  const s = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/**
 * The series the UI holds as CSV: one row per step row, eval columns on the eval steps (an eval
 * step the step block lacks gets its own row). Several runs get a leading `run` column.
 */
export function toCsv(runs: readonly Pick<RunData, 'header' | 'steps' | 'evals'>[]): string {
  const multi = runs.length > 1;
  const lines = [(multi ? ['run', ...CSV_COLUMNS] : [...CSV_COLUMNS]).join(',')];
  for (const run of runs) {
    const s: StepBlock = run.steps;
    const e: EvalBlock = run.evals;
    const evalAt = new Map<number, number>();
    e.steps.forEach((step, i) => evalAt.set(step, i));
    const steps = [...new Set([...s.steps, ...e.steps])].sort((a, b) => a - b);
    const rowAt = new Map<number, number>();
    s.steps.forEach((step, i) => rowAt.set(step, i));
    for (const step of steps) {
      const r = rowAt.get(step);
      const v = evalAt.get(step);
      const cells = [
        step,
        r === undefined ? null : s.loss[r],
        r === undefined ? null : s.lr[r],
        r === undefined ? null : s.lossScale[r],
        r === undefined ? null : s.overflow[r],
        r === undefined ? null : s.imgPerS[r],
        r === undefined ? null : s.stepMs[r],
        r === undefined ? null : s.dataMs[r],
        v === undefined ? null : e.epochs[v],
        v === undefined ? null : e.valLoss[v],
        v === undefined ? null : e.valAcc[v],
      ];
      lines.push((multi ? [csvCell(run.header.name), ...cells.map(csvCell)] : cells.map(csvCell)).join(','));
    }
  }
  return lines.join('\n') + '\n';
}

/** 2^k for exact powers of two (how loss scales move), else a short number. */
export function formatScale(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  const k = Math.log2(v);
  if (v > 0 && Number.isInteger(k)) return `2^${k} (${formatNumber(v)})`;
  return formatNumber(v);
}

/** A short number (4 significant digits), grouped as the display language groups thousands. */
export function formatNumber(v: number | null | undefined, digits = 4): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  if (v !== 0 && (Math.abs(v) >= 1e6 || Math.abs(v) < 1e-3)) return v.toExponential(2);
  return localNumber(Number(v.toPrecision(digits)));
}

export function formatPercent(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  return new Intl.NumberFormat(l10n.language(), {
    style: 'percent',
    minimumFractionDigits: 1,
    maximumFractionDigits: 1,
  }).format(v);
}

/** 75 -> "1m 15s", 3725 -> "1h 02m" (zh-cn: "1 分 15 秒", "1 小时 02 分"). */
export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds) || seconds < 0) return '–';
  const s = Math.round(seconds);
  if (s < 60) return l10n.t('{0}s', s);
  if (s < 3600) return l10n.t('{0}m {1}s', Math.floor(s / 60), String(s % 60).padStart(2, '0'));
  return l10n.t('{0}h {1}m', localNumber(Math.floor(s / 3600)), String(Math.floor((s % 3600) / 60)).padStart(2, '0'));
}

/** A file name from a run name: letters, digits, dot, dash and underscore only. */
export function safeFileName(name: string, ext: string): string {
  const base =
    name
      .replace(/[^A-Za-z0-9_.-]+/g, '-')
      .replace(/-{2,}/g, '-')
      .replace(/^[-.]+|[-.]+$/g, '')
      .slice(0, 60) || 'run';
  return `${base}.${ext}`;
}
