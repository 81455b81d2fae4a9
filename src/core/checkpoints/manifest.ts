// A run's checkpoints as the views show them: `checkpoints.json` (the truth about which files exist
// and which is best, docs/protocol.md section 1) read defensively, with the `checkpoint` events
// filling in what an entry lacks. Nothing here throws on bad input: a junk entry becomes a problem
// the view shows with an error icon, and the good entries are still listed.

/** One checkpoint of a run, normalized. Numbers the runner wrote as null (NaN/Inf) stay null. */
export interface CheckpointEntry {
  /** Path relative to the run directory, e.g. `checkpoints/it-e2-s6.ckpt`. */
  file: string;
  epoch: number | null;
  step: number | null;
  loss: number | null;
  valLoss: number | null;
  valAcc: number | null;
  /** The run's top-5 accuracy at this checkpoint (metrics.val_top5); absent or null before runners had it. */
  valTop5?: number | null;
  /** `requested` or `stopped` for checkpoints that a control request or a stop made. */
  reason: string | null;
  bytes: number | null;
  sha256: string | null;
  /** unix seconds */
  createdAt: number | null;
  best: boolean;
  /** `ema` for the weights' moving average (train.ema); absent for the run's own weights. */
  kind?: string;
  /** Position in saving order (0 = oldest). */
  order: number;
  /** Where the entry came from: the manifest, or only a `checkpoint` event (manifest unreadable). */
  source: 'manifest' | 'events';
  /**
   * The pretrained weights the run started from (`weights` of the entry): as written in the spec, and their
   * sha256; `firstSource`, when they were a runner's checkpoint, is where that chain of fine-tunes began
   * (the last link of `from`), else null.
   */
  weights: { source: string; sha256: string | null; firstSource: string | null } | null;
  /** The evaluation preprocessing recorded with it (`preprocess.name`: imagenet, mindcv, torchvision, timm). */
  preprocess: string | null;
}

/** An entry of checkpoints.json that cannot be used, shown in the view with its reason. */
export interface ManifestProblem {
  /** Index in the manifest array, or -1 for a problem with the whole file. */
  index: number;
  /** The entry's `file` when it had a usable string, else a short text of the entry. */
  label: string;
  message: string;
}

export interface ParsedManifest {
  entries: CheckpointEntry[];
  problems: ManifestProblem[];
}

const SHA256 = /^[0-9a-f]{64}$/;

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

function int(v: unknown): number | null {
  const n = num(v);
  return n !== null && Number.isInteger(n) && n >= 0 ? n : null;
}

/**
 * Why `file` cannot name a checkpoint inside the run directory, or undefined when it can: an
 * absolute path or `..` would let a doctored manifest point the actions (delete, download) anywhere.
 */
export function unsafeFileReason(file: string): string | undefined {
  if (file.trim() === '') return 'empty file name';
  if (file.startsWith('/') || /^[A-Za-z]:[\\/]/.test(file) || file.startsWith('\\'))
    return 'absolute path (must be relative to the run directory)';
  if (file.split(/[\\/]/).includes('..')) return "path leaves the run directory ('..')";
  if (file.includes('\0')) return 'NUL in the file name';
  return undefined;
}

function shortText(v: unknown): string {
  let s: string;
  try {
    s = JSON.stringify(v) ?? String(v);
  } catch {
    s = String(v);
  }
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

/** One entry (a manifest element or a checkpoint event), or the reason it is unusable. */
export function parseEntry(
  raw: unknown,
  order: number,
  source: CheckpointEntry['source'],
): CheckpointEntry | { problem: string; label: string } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return { problem: 'not an object', label: shortText(raw) };
  const o = raw as Record<string, unknown>;
  if (typeof o.file !== 'string') return { problem: 'no "file" string', label: shortText(raw) };
  const unsafe = unsafeFileReason(o.file);
  if (unsafe) return { problem: unsafe, label: o.file };
  const metrics =
    typeof o.metrics === 'object' && o.metrics !== null && !Array.isArray(o.metrics)
      ? (o.metrics as Record<string, unknown>)
      : {};
  const sha = typeof o.sha256 === 'string' && SHA256.test(o.sha256.toLowerCase()) ? o.sha256.toLowerCase() : null;
  return {
    file: o.file,
    epoch: int(o.epoch),
    step: int(o.step),
    loss: num(metrics.loss),
    valLoss: num(metrics.val_loss),
    valAcc: num(metrics.val_acc),
    valTop5: num(metrics.val_top5),
    reason: typeof metrics.reason === 'string' ? metrics.reason : null,
    bytes: int(o.bytes),
    sha256: sha,
    createdAt: num(o.created_at),
    best: o.best === true,
    ...(typeof o.kind === 'string' && o.kind ? { kind: o.kind.slice(0, 40) } : {}),
    order,
    source,
    weights: weightsOf(o.weights),
    preprocess: shortString(obj(o.preprocess).name),
  };
}

function obj(x: unknown): Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x) ? (x as Record<string, unknown>) : {};
}

/** A string of a size worth showing (the manifest is written by whoever can write the run directory). */
function shortString(x: unknown): string | null {
  return typeof x === 'string' && x !== '' && x.length <= 4096 ? x : null;
}

/** Links of `weights.from` followed at most: the runner keeps 8, and always the chain's first weights last. */
const MAX_CHAIN = 64;

function weightsOf(x: unknown): CheckpointEntry['weights'] {
  const w = obj(x);
  const source = shortString(w.source);
  if (source === null) return null;
  const sha = typeof w.sha256 === 'string' && SHA256.test(w.sha256.toLowerCase()) ? w.sha256.toLowerCase() : null;
  let firstSource: string | null = null;
  let link = obj(w.from);
  for (let i = 0; i < MAX_CHAIN && shortString(link.source) !== null; i++) {
    firstSource = shortString(link.source);
    link = obj(link.from);
  }
  return { source, sha256: sha, firstSource };
}

/**
 * Parses the text of checkpoints.json. `undefined` (no file) gives no entries and no problem;
 * text that is not a JSON array gives one whole-file problem. Duplicate file names keep the last
 * (the runner moves a re-saved name to the end), and at most one entry stays `best` (the last so
 * marked), as the protocol promises.
 */
export function parseManifest(text: string | undefined): ParsedManifest {
  if (text === undefined) return { entries: [], problems: [] };
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    return {
      entries: [],
      problems: [
        {
          index: -1,
          label: 'checkpoints.json',
          message: `not valid JSON: ${e instanceof Error ? e.message : String(e)}`,
        },
      ],
    };
  }
  if (!Array.isArray(data))
    return { entries: [], problems: [{ index: -1, label: 'checkpoints.json', message: 'not a JSON array' }] };
  const byFile = new Map<string, CheckpointEntry>();
  const problems: ManifestProblem[] = [];
  data.forEach((raw, index) => {
    const e = parseEntry(raw, index, 'manifest');
    if ('problem' in e) problems.push({ index, label: e.label, message: e.problem });
    else {
      byFile.delete(e.file);
      byFile.set(e.file, e);
    }
  });
  const entries = [...byFile.values()];
  const bests = entries.filter((e) => e.best);
  for (const e of bests.slice(0, -1)) e.best = false;
  return { entries, problems };
}

/**
 * The run's checkpoints: the manifest's entries, with fields they lack (metrics, size, hash) taken
 * from the `checkpoint` event of the same file and step. When the manifest is missing or unreadable
 * the events stand in for it (last event per file; `best` recomputed: highest val_acc, ties to the
 * later step), marked `source: 'events'`, because nothing else says which checkpoints exist.
 */
export function mergeCheckpointEvents(
  manifest: ParsedManifest,
  events: readonly unknown[],
  manifestReadable: boolean,
): ParsedManifest {
  const fromEvents = new Map<string, CheckpointEntry>();
  let order = 0;
  for (const ev of events) {
    if (typeof ev !== 'object' || ev === null || (ev as { type?: unknown }).type !== 'checkpoint') continue;
    const e = parseEntry(ev, order++, 'events');
    if ('problem' in e) continue; // a bad event is not a file; the manifest has the last word
    fromEvents.delete(e.file);
    fromEvents.set(e.file, e);
  }
  if (manifestReadable) {
    const entries = manifest.entries.map((m) => {
      const ev = fromEvents.get(m.file);
      if (!ev || (m.step !== null && ev.step !== null && ev.step !== m.step)) return m;
      return {
        ...m,
        epoch: m.epoch ?? ev.epoch,
        step: m.step ?? ev.step,
        loss: m.loss ?? ev.loss,
        valLoss: m.valLoss ?? ev.valLoss,
        valAcc: m.valAcc ?? ev.valAcc,
        valTop5: m.valTop5 ?? ev.valTop5,
        reason: m.reason ?? ev.reason,
        bytes: m.bytes ?? ev.bytes,
        sha256: m.sha256 ?? ev.sha256,
        createdAt: m.createdAt ?? ev.createdAt,
      };
    });
    return { entries, problems: manifest.problems };
  }
  const entries = [...fromEvents.values()].map((e, i) => ({ ...e, order: i, best: false }));
  let best: CheckpointEntry | undefined;
  for (const e of entries) {
    if (e.valAcc === null) continue;
    if (!best || e.valAcc > best.valAcc! || (e.valAcc === best.valAcc && (e.step ?? 0) >= (best.step ?? 0))) best = e;
  }
  if (best) best.best = true;
  return { entries, problems: manifest.problems };
}

/** The best entry, if any. */
export function bestEntry(entries: readonly CheckpointEntry[]): CheckpointEntry | undefined {
  return entries.find((e) => e.best);
}

/** The newest entry in saving order. */
export function newestEntry(entries: readonly CheckpointEntry[]): CheckpointEntry | undefined {
  let newest: CheckpointEntry | undefined;
  for (const e of entries) if (!newest || e.order > newest.order) newest = e;
  return newest;
}

/** `1.2 GB`, `85.3 MB`, `512 B`. */
export function formatBytes(n: number | null): string {
  if (n === null) return '?';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = n;
  let u = 0;
  while (v >= 1000 && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  return u === 0 ? `${v} B` : `${v.toFixed(v >= 100 ? 0 : 1)} ${units[u]}`;
}
