// The predictions gallery's choices over an evaluation's per-image records (`predictions` of
// `<ckpt>.eval.json`, see docs/protocol.md): the images of one confusion-matrix cell, the most
// confident mistakes, and what changed between two checkpoints evaluated on the same data. Pure,
// so the explorer's host only asks for thumbnails and shows.

import type { ImagePrediction } from '../../shared/checkpointsProtocol';

/** One image's record: its file relative to the eval's data folder, true class, and top-5 as [class, prob]. */
export type PredictionRecord = ImagePrediction;

export interface PredictionsKept {
  total: number;
  kept: number;
  /** Every image of the eval is recorded. */
  all: boolean;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isIndex = (v: unknown, n: number): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < n;

/** Records this many at most are taken from a file (the runner writes 2000 at most). */
export const MAX_RECORDS = 10_000;

/** The well-formed records of a runner's `predictions` for `classes` classes; the rest are dropped. */
export function toPredictionRecords(raw: unknown, classes: number): PredictionRecord[] {
  if (!Array.isArray(raw)) return [];
  const out: PredictionRecord[] = [];
  for (const r of raw.slice(0, MAX_RECORDS)) {
    if (!isObj(r) || typeof r.file !== 'string' || !isIndex(r.label, classes)) continue;
    let top: [number, number][] | null = null;
    if (Array.isArray(r.top)) {
      top = r.top
        .filter(
          (t): t is [number, number] =>
            Array.isArray(t) && isIndex(t[0], classes) && typeof t[1] === 'number' && Number.isFinite(t[1]),
        )
        .map((t) => [t[0], t[1]]);
      if (top.length === 0) continue;
    } else if (r.top !== null) continue;
    out.push({ file: r.file, label: r.label, top });
  }
  return out;
}

export function toPredictionsKept(raw: unknown, records: number): PredictionsKept {
  const o = isObj(raw) ? raw : {};
  const n = (v: unknown, d: number) => (typeof v === 'number' && Number.isFinite(v) ? v : d);
  return { total: n(o.total, records), kept: n(o.kept, records), all: o.all !== false };
}

/** The predicted class (top-1), or null for NaN/Inf logits. */
export const predicted = (r: PredictionRecord): number | null => r.top?.[0]?.[0] ?? null;
/** The probability of the top-1 class (0 for NaN/Inf logits). */
export const confidence = (r: PredictionRecord): number => r.top?.[0]?.[1] ?? 0;

/** The recorded images of cell [trueClass][predictedClass], the most confident first. */
export function cellImages(records: readonly PredictionRecord[], trueClass: number, pred: number): PredictionRecord[] {
  return records
    .filter((r) => r.label === trueClass && predicted(r) === pred)
    .sort((a, b) => confidence(b) - confidence(a));
}

/** The wrong predictions, the most confident first: where label errors show. */
export function confidentMistakes(records: readonly PredictionRecord[], limit: number): PredictionRecord[] {
  return records
    .filter((r) => predicted(r) !== null && predicted(r) !== r.label)
    .sort((a, b) => confidence(b) - confidence(a))
    .slice(0, limit);
}

export interface PredictionChange {
  file: string;
  label: number;
  a: PredictionRecord['top'];
  b: PredictionRecord['top'];
  /** 'fixed': wrong in A, right in B; 'broken': right in A, wrong in B; 'other': wrong in both, differently. */
  kind: 'fixed' | 'broken' | 'other';
}

export interface PredictionsDiff {
  /** Images recorded in both evaluations (matched by file). */
  common: number;
  accuracyA: number | null;
  accuracyB: number | null;
  /** Per class: recall in A and in B over the common images of that class (null without any). */
  perClass: { recallA: number | null; recallB: number | null; support: number }[];
  /** Images whose top-1 differs: the fixed and broken first. */
  changed: PredictionChange[];
}

/**
 * Two checkpoints' predictions on the same images. Only images recorded in both count (above the
 * record limit each eval keeps its own mistakes and sample: the diff then covers their overlap).
 */
export function diffPredictions(
  a: readonly PredictionRecord[],
  b: readonly PredictionRecord[],
  classes: number,
): PredictionsDiff {
  const inB = new Map(b.map((r) => [r.file, r]));
  const perClass = Array.from({ length: classes }, () => ({ rightA: 0, rightB: 0, support: 0 }));
  const changed: PredictionChange[] = [];
  let common = 0;
  let rightA = 0;
  let rightB = 0;
  for (const ra of a) {
    const rb = inB.get(ra.file);
    if (!rb || rb.label !== ra.label) continue;
    common++;
    const pa = predicted(ra);
    const pb = predicted(rb);
    const c = perClass[ra.label];
    c.support++;
    if (pa === ra.label) {
      rightA++;
      c.rightA++;
    }
    if (pb === ra.label) {
      rightB++;
      c.rightB++;
    }
    if (pa === pb) continue;
    const kind = pa === ra.label ? 'broken' : pb === ra.label ? 'fixed' : 'other';
    changed.push({ file: ra.file, label: ra.label, a: ra.top, b: rb.top, kind });
  }
  const order = { fixed: 0, broken: 1, other: 2 } as const;
  changed.sort((x, y) => order[x.kind] - order[y.kind] || x.file.localeCompare(y.file));
  return {
    common,
    accuracyA: common ? rightA / common : null,
    accuracyB: common ? rightB / common : null,
    perClass: perClass.map((c) => ({
      recallA: c.support ? c.rightA / c.support : null,
      recallB: c.support ? c.rightB / c.support : null,
      support: c.support,
    })),
    changed,
  };
}
