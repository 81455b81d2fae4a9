// Messages between the checkpoint explorer UI (webview/checkpoints) and its host
// (src/vscode/checkpoints/explorer.ts). The host owns the state and sends the whole of it as a
// snapshot after every change (a hidden webview drops messages, so a snapshot on reveal is enough
// to catch up). The UI is untrusted: every message it sends goes through `validateUiMessage`,
// and it names checkpoints only by their manifest `file`, which must be one the host listed.

export type ExportFormat = 'mindir' | 'onnx';

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
  /** Why the file is unusable (missing, truncated, sha256 mismatch), from `verify`. */
  problem: string | null;
  exports: { file: string; format: ExportFormat; bytes: number }[];
  /** Accuracy of the last kept evaluation, if any. */
  evalAcc: number | null;
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
}

export interface CompareView {
  a: string;
  b: string;
  tensors: { name: string; shape: number[]; l2: number | null; rel: number | null; frozen: boolean | null }[];
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
    runId: string;
    target: string;
    backbone: string | null;
    pretrained: string | null;
    /** The sha256 of the pretrained weights, from the newest checkpoint's manifest entry (runner ≥ issue 16). */
    weightsSha256: string | null;
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
  /** What the host is doing now (`Evaluating it-e2-s6.ckpt…`), or null. */
  busy: string | null;
  /** The last error, in words. */
  error: string | null;
}

export type HostMessage = { type: 'state'; state: ExplorerState };

export type RowAction = 'resume' | 'fineTune' | 'download' | 'reveal' | 'copyPath' | 'delete';
export const ROW_ACTIONS: readonly RowAction[] = ['resume', 'fineTune', 'download', 'reveal', 'copyPath', 'delete'];

export type UiMessage =
  | { type: 'ready' }
  | { type: 'refresh' }
  | { type: 'select'; file: string }
  | { type: 'evaluate'; file: string; data: 'val' | 'pick' }
  | { type: 'export'; file: string; format: ExportFormat }
  | { type: 'compare'; a: string; b: string }
  | { type: 'action'; action: RowAction; file: string }
  | { type: 'prune'; keepNewest: number };

export type Validated = { ok: true; message: UiMessage } | { ok: false; error: string };

const MAX_FILE = 4096;

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
      return { ok: true, message: { type: m.type } };
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
