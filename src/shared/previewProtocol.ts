// Messages between the Preview Data / Classify panel (webview/preview) and its host
// (src/vscode/preview/panel.ts). The host owns the state and sends all of it as one snapshot after
// each change and when the panel becomes visible again (a hidden webview drops messages). The UI is
// untrusted: what it sends goes through `validateUiMessage`, and it may name only files the host
// listed in the snapshot (problem files, thumbnails, classified images).

/** One class of the data set: its counts, and its bar's length (0..1 of the largest class). */
export interface ClassBar {
  name: string;
  train: number;
  val: number;
  images: number;
  /** train / the largest class's train: the bar's share of the full width. */
  share: number;
  tiny: boolean;
}

export type ProblemKind = 'leak' | 'duplicate' | 'conflict' | 'tiny' | 'skipped' | 'notRead';

/** One line of the warnings list, with the files it is about (at most a few dozen each). */
export interface ProblemView {
  kind: ProblemKind;
  /** One sentence, e.g. "3 validation images are copies of training images (leakage)". */
  message: string;
  files: { path: string; note: string }[];
  /** Files the runner listed beyond `files` (not sent to the UI). */
  more: number;
}

export interface Percentiles {
  min: number;
  p5: number;
  p50: number;
  p95: number;
  max: number;
}

export interface SizeStats {
  count: number;
  width: Percentiles | null;
  height: Percentiles | null;
  /** [mode, count], most frequent first. */
  modes: [string, number][];
  formats: [string, number][];
  grayscale: number;
  alpha: number;
}

/** One sample image: JPEG base64 (no data: prefix) as the runner made them. */
export interface Thumb {
  file: string;
  original: string;
  /** After the run's train augmentation (null when augmentation is off). */
  train: string | null;
  /** After the eval resize and centre crop. */
  eval: string | null;
}

/** The runner's preview document, checked and shaped for the panel (src/core/preview/model.ts). */
export interface PreviewView {
  train: string;
  val: string | null;
  /** "10% held out of the training folder (seed 1)" or "validation folder /data/val". */
  split: string;
  numTrain: number;
  numVal: number;
  imageSize: number;
  /** The train augmentation preset (data.augment: "basic", "randaugment"...); null when it is "none". */
  augment: string | null;
  classes: ClassBar[];
  /** "1.2× (blue triangle 6 / green square 5)"; null with fewer than two classes. */
  imbalance: { ratio: number; largest: string; smallest: string; text: string } | null;
  problems: ProblemView[];
  sizes: SizeStats;
  thumbnails: {
    classes: { name: string; samples: Thumb[] }[];
    shown: number;
    leftOut: number;
    bytes: number;
    /** How the eval thumbnails were made: the run's preprocessing, then its notes and warnings (none from older runners). */
    evalNote: string[];
  };
  elapsedS: number;
}

/** One image's answer from `predict`: its top classes, or its own error. */
export interface PredictionView {
  file: string;
  name: string;
  top: { class: string; prob: number }[] | null;
  error: string | null;
  /** A small image of the file (data: URL) when the host could read it; null otherwise. */
  image: string | null;
}

export interface ClassifyView {
  ckpt: string;
  classes: number;
  device: string;
  predictions: PredictionView[];
}

export type PanelStatus = 'running' | 'done' | 'failed' | 'cancelled';

export interface PanelState {
  kind: 'preview' | 'classify';
  /** The folder (preview) or checkpoint (classify), as the target names it. */
  subject: string;
  target: string;
  ssh: boolean;
  status: PanelStatus;
  /** What is being done, e.g. "Reading images…". */
  activity: string | null;
  progress: { done: number; total: number } | null;
  /** The runner's message when it failed (or was cancelled). */
  error: string | null;
  preview: PreviewView | null;
  classify: ClassifyView | null;
}

export type HostMessage = { type: 'state'; state: PanelState };

export type UiMessage = { type: 'ready' } | { type: 'cancel' } | { type: 'rerun' } | { type: 'openFile'; path: string };

export type Validated = { ok: true; message: UiMessage } | { ok: false; error: string };

const MAX_PATH = 4096;

/** Checks a message from the UI; `files` are the paths the current snapshot lists. */
export function validateUiMessage(raw: unknown, files: ReadonlySet<string>): Validated {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return { ok: false, error: 'message is not an object' };
  const m = raw as Record<string, unknown>;
  switch (m.type) {
    case 'ready':
    case 'cancel':
    case 'rerun':
      return { ok: true, message: { type: m.type } };
    case 'openFile': {
      const p = m.path;
      if (typeof p !== 'string' || p.length === 0 || p.length > MAX_PATH)
        return { ok: false, error: 'openFile: "path" must be a file path' };
      if (!files.has(p)) return { ok: false, error: 'openFile: "path" names a file the panel does not list' };
      return { ok: true, message: { type: 'openFile', path: p } };
    }
    default:
      return { ok: false, error: `unknown message type ${JSON.stringify(m.type)?.slice(0, 40)}` };
  }
}

/** Every file path a snapshot lists: the only ones openFile may name. */
export function listedFiles(s: PanelState): Set<string> {
  const out = new Set<string>();
  for (const p of s.preview?.problems ?? []) for (const f of p.files) out.add(f.path);
  for (const c of s.preview?.thumbnails.classes ?? []) for (const t of c.samples) out.add(t.file);
  for (const p of s.classify?.predictions ?? []) out.add(p.file);
  return out;
}

/** Checks a host message in the UI (the host is trusted; a stale or foreign message is ignored). */
export function isHostMessage(raw: unknown): raw is HostMessage {
  if (typeof raw !== 'object' || raw === null) return false;
  const m = raw as { type?: unknown; state?: unknown };
  return (
    m.type === 'state' &&
    typeof m.state === 'object' &&
    m.state !== null &&
    typeof (m.state as { status?: unknown }).status === 'string'
  );
}
