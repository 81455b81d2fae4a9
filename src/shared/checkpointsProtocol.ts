// Messages between the checkpoint explorer UI (webview/checkpoints) and its host
// (src/vscode/checkpoints/explorer.ts). The host owns the state and sends the whole of it as a
// snapshot after every change (a hidden webview drops messages, so a snapshot on reveal is enough
// to catch up). The UI is untrusted: every message it sends goes through `validateUiMessage`,
// and it names checkpoints only by their manifest `file`, which must be one the host listed.

import type { Translate } from './l10n';

export type ExportFormat = 'mindir' | 'onnx';

/** Why the runner saved a checkpoint (a row's `reason` code) in words; a reason it adds later as written. */
export function saveReason(reason: string, t: Translate): string {
  if (reason === 'requested') return t('saved on request');
  if (reason === 'stopped') return t('saved when the run stopped');
  return reason;
}

/** One row of the checkpoints table. */
export interface CheckpointRow {
  /** The manifest `file` (relative to the run directory): the row's id in every message. */
  file: string;
  name: string;
  epoch: number | null;
  step: number | null;
  loss: number | null;
  valLoss: number | null;
  valAcc: number | null;
  reason: string | null;
  bytes: number | null;
  createdAt: number | null;
  best: boolean;
  /** `ema`: the weights' moving average (train.ema), shown as a tag; absent for the run's own weights. */
  kind?: string;
  /** Why the file is unusable (missing, truncated, sha256 mismatch), from `verify`. */
  problem: string | null;
  exports: { file: string; format: ExportFormat; bytes: number }[];
  /** Accuracy of the last kept evaluation, if any. */
  evalAcc: number | null;
  /** Top-5 accuracy of the run's own eval at this checkpoint (checkpoint metrics), if recorded. */
  valTop5: number | null;
}

export interface TensorRow {
  name: string;
  shape: number[];
  dtype: string;
  elements: number;
  module: string;
  trainable: boolean | null;
}

export interface TensorsView {
  file: string;
  total: number;
  headOut: number | null;
  headMatchesClasses: boolean | null;
  tensors: TensorRow[];
}

export interface EvalView {
  file: string;
  data: string;
  numImages: number;
  accuracy: number | null;
  loss: number | null;
  classes: string[];
  perClass: { class: string; precision: number | null; recall: number | null; support: number }[];
  confusion: number[][];
  skipped: number;
  evaluatedAt: number | null;
  /** Top-5 accuracy; null from a runner before it. */
  top5: number | null;
  /** The per-image records the eval kept (the gallery's images): how many of how many. */
  recorded: { kept: number; total: number; all: boolean } | null;
  /** Recorded images predicted wrongly (the "most confident mistakes" gallery's size). */
  mistakes: number;
}

/** One image's prediction, as `<ckpt>.eval.json` records it: top-5 as [class index, probability]. */
export interface ImagePrediction {
  /** Relative to the evaluation's data folder. */
  file: string;
  label: number;
  /** null when the network's logits were NaN/Inf for the image. */
  top: [number, number][] | null;
}

/** An image in the gallery: its prediction(s) and its thumbnail (a base64 JPEG) or why there is none. */
export interface GalleryItem extends ImagePrediction {
  /** The other checkpoint's top-5, in a comparison by predictions. */
  topB?: [number, number][] | null;
  thumb: string | null;
  thumbError: string | null;
}

export type GalleryWhat = { kind: 'cell'; row: number; col: number } | { kind: 'mistakes' };

/** The images of a confusion-matrix cell, or the most confident mistakes, of one evaluation. */
export interface GalleryView {
  file: string;
  what: GalleryWhat;
  /** Images in the cell per the confusion matrix (all evaluated images), or recorded mistakes. */
  count: number;
  /** Of those, the ones the eval recorded (the rest were not kept: see EvalView.recorded). */
  recorded: number;
  /** The first of them, most confident first, with thumbnails. */
  items: GalleryItem[];
}

/** Two checkpoints compared by their predictions on the images both evaluations recorded. */
export interface PredictionsCompareView {
  a: string;
  b: string;
  data: string;
  common: number;
  accuracyA: number | null;
  accuracyB: number | null;
  perClass: { class: string; recallA: number | null; recallB: number | null; support: number }[];
  /** Images whose top-1 changed, the fixed and the broken first. */
  changedCount: number;
  fixed: number;
  broken: number;
  items: (GalleryItem & { kind: 'fixed' | 'broken' | 'other' })[];
}

export interface CompareView {
  a: string;
  b: string;
  tensors: {
    name: string;
    shape: number[];
    l2: number | null;
    rel: number | null;
    frozen: boolean | null;
    /** 'optimizer' and 'run state' tensors are listed after the network's. */
    group: string;
  }[];
  onlyInA: string[];
  onlyInB: string[];
  shapeMismatch: string[];
  changed: number;
  unchanged: number;
  frozenMaxL2: number | null;
}

export interface ExplorerState {
  run: {
    name: string;
    /** The user's notes (meta.json, plain text, at most 10 KB) and tags; empty when none. */
    notes?: string;
    tags?: string[];
    runId: string;
    target: string;
    backbone: string | null;
    pretrained: string | null;
    /** The sha256 of the pretrained weights, from the newest checkpoint's manifest entry (runner ≥ issue 16). */
    weightsSha256: string | null;
    /** Where a chain of fine-tunes began, when the pretrained weights are a runner's checkpoint (`weights.from`). */
    weightsFirst?: string | null;
    /** The evaluation preprocessing the checkpoints record (`imagenet`, `mindcv`, `torchvision`, `timm`). */
    preprocess: string | null;
    freeze: string | null;
    classes: string[];
    live: boolean;
    ssh: boolean;
  };
  rows: CheckpointRow[];
  /** Manifest entries that could not be read, and other problems with the run's files. */
  problems: { label: string; message: string }[];
  selected: string | null;
  tensors: TensorsView | null;
  evaluation: EvalView | null;
  comparison: CompareView | null;
  /** The predictions gallery of the shown evaluation, if one is open. */
  gallery: GalleryView | null;
  predictionsComparison: PredictionsCompareView | null;
  /** What the host is doing now (`Evaluating it-e2-s6.ckpt…`), or null. */
  busy: string | null;
  /** The last error, in words. */
  error: string | null;
}

export type HostMessage = { type: 'state'; state: ExplorerState };

export type RowAction = 'resume' | 'fineTune' | 'classify' | 'download' | 'reveal' | 'copyPath' | 'delete';
export const ROW_ACTIONS: readonly RowAction[] = [
  'resume',
  'fineTune',
  'classify',
  'download',
  'reveal',
  'copyPath',
  'delete',
];

export type UiMessage =
  | { type: 'ready' }
  | { type: 'refresh' }
  | { type: 'select'; file: string }
  | { type: 'evaluate'; file: string; data: 'val' | 'pick' }
  | { type: 'export'; file: string; format: ExportFormat }
  | { type: 'compare'; a: string; b: string }
  | { type: 'gallery'; file: string; what: GalleryWhat }
  | { type: 'closeGallery' }
  | { type: 'comparePredictions'; a: string; b: string }
  | { type: 'action'; action: RowAction; file: string }
  | { type: 'prune'; keepNewest: number };

export type Validated = { ok: true; message: UiMessage } | { ok: false; error: string };

const MAX_FILE = 4096;
const MAX_CLASSES = 100_000;

/**
 * Checks a message from the UI. `files` are the checkpoint files the host listed: a message that
 * names any other file is refused, so a compromised webview cannot reach outside the run.
 */
export function validateUiMessage(raw: unknown, files: ReadonlySet<string>): Validated {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return { ok: false, error: 'message is not an object' };
  const m = raw as Record<string, unknown>;
  const bad = (error: string): Validated => ({ ok: false, error: `${String(m.type)}: ${error}` });
  const file = (field: string): string | Validated => {
    const v = m[field];
    if (typeof v !== 'string' || v.length === 0 || v.length > MAX_FILE)
      return bad(`"${field}" must be a checkpoint file name`);
    if (!files.has(v)) return bad(`"${field}" names a checkpoint this run does not list`);
    return v;
  };
  switch (m.type) {
    case 'ready':
    case 'refresh':
    case 'closeGallery':
      return { ok: true, message: { type: m.type } };
    case 'gallery': {
      const f = file('file');
      if (typeof f !== 'string') return f;
      const w = m.what as Record<string, unknown> | null;
      if (typeof w !== 'object' || w === null) return bad('"what" must be a cell or "mistakes"');
      if (w.kind === 'mistakes') return { ok: true, message: { type: 'gallery', file: f, what: { kind: 'mistakes' } } };
      const index = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < MAX_CLASSES;
      if (w.kind !== 'cell' || !index(w.row) || !index(w.col))
        return bad(
          `"what" must be {kind: "cell", row, col} with class indices below ${MAX_CLASSES}, or {kind: "mistakes"}`,
        );
      return {
        ok: true,
        message: { type: 'gallery', file: f, what: { kind: 'cell', row: w.row as number, col: w.col as number } },
      };
    }
    case 'comparePredictions': {
      const a = file('a');
      if (typeof a !== 'string') return a;
      const b = file('b');
      if (typeof b !== 'string') return b;
      if (a === b) return bad('pick two different checkpoints');
      return { ok: true, message: { type: 'comparePredictions', a, b } };
    }
    case 'select': {
      const f = file('file');
      return typeof f === 'string' ? { ok: true, message: { type: 'select', file: f } } : f;
    }
    case 'evaluate': {
      const f = file('file');
      if (typeof f !== 'string') return f;
      if (m.data !== 'val' && m.data !== 'pick') return bad('"data" must be "val" or "pick"');
      return { ok: true, message: { type: 'evaluate', file: f, data: m.data } };
    }
    case 'export': {
      const f = file('file');
      if (typeof f !== 'string') return f;
      if (m.format !== 'mindir' && m.format !== 'onnx') return bad('"format" must be "mindir" or "onnx"');
      return { ok: true, message: { type: 'export', file: f, format: m.format } };
    }
    case 'compare': {
      const a = file('a');
      if (typeof a !== 'string') return a;
      const b = file('b');
      if (typeof b !== 'string') return b;
      if (a === b) return bad('pick two different checkpoints');
      return { ok: true, message: { type: 'compare', a, b } };
    }
    case 'action': {
      if (typeof m.action !== 'string' || !(ROW_ACTIONS as readonly string[]).includes(m.action))
        return bad(`"action" must be one of ${ROW_ACTIONS.join(', ')}`);
      const f = file('file');
      return typeof f === 'string'
        ? { ok: true, message: { type: 'action', action: m.action as RowAction, file: f } }
        : f;
    }
    case 'prune': {
      const n = m.keepNewest;
      if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 10_000)
        return bad('"keepNewest" must be a whole number from 1 to 10000');
      return { ok: true, message: { type: 'prune', keepNewest: n } };
    }
    default:
      return { ok: false, error: `unknown message type ${JSON.stringify(m.type)?.slice(0, 40)}` };
  }
}

/** Checks a host message in the UI (the host is trusted, but a stale or foreign message is ignored). */
export function isHostMessage(raw: unknown): raw is HostMessage {
  if (typeof raw !== 'object' || raw === null) return false;
  const m = raw as { type?: unknown; state?: unknown };
  return (
    m.type === 'state' &&
    typeof m.state === 'object' &&
    m.state !== null &&
    Array.isArray((m.state as { rows?: unknown }).rows)
  );
}
