// A typed client for the runner's checkpoint commands (`inspect`, `eval`, `export`, `compare`,
// `delete-checkpoints`, `verify`), in the style of targets/runnerCli.ts: argv arrays only, one JSON object
// back, errors as RunnerError. The runner's output is checked here before anyone relies on it, so a
// runner of another version gives a clear error instead of a view that breaks on a missing field.
// One file above 450 lines on purpose: each command is a short argv builder beside the checks of its answer,
// and the checks share the small readers at the top.
import { WordedError } from '../l10n';
import * as path from 'node:path';
import { RunnerError, runRunner, type RunOptions } from '../targets/runnerCli';
import type { RunnerConfig } from '../targets/invocation';
import type { Target } from '../targets/target';
import { toPredictionRecords, toPredictionsKept, type PredictionRecord, type PredictionsKept } from './predictions';

type Runner = RunnerConfig | Target;

/** Keeps a relative path that starts with '-' from being read as an option by argparse. */
function operand(p: string): string {
  return p.startsWith('-') ? `./${p}` : p;
}

export type ExportFormat = 'mindir' | 'onnx';

export const checkpointArgs = {
  inspect: (ckpt: string, runDir?: string) => [
    'inspect',
    operand(ckpt),
    ...(runDir === undefined ? [] : ['--run', operand(runDir)]),
  ],
  eval: (runDir: string, ckpt: string, opts: { data?: string; batchSize?: number } = {}) => [
    'eval',
    '--run',
    operand(runDir),
    '--ckpt',
    operand(ckpt),
    ...(opts.data === undefined ? [] : ['--data', operand(opts.data)]),
    ...(opts.batchSize === undefined ? [] : ['--batch-size', String(opts.batchSize)]),
  ],
  export: (runDir: string, ckpt: string, format: ExportFormat, out?: string) => [
    'export',
    '--run',
    operand(runDir),
    '--ckpt',
    operand(ckpt),
    '--format',
    format,
    ...(out === undefined ? [] : ['--out', operand(out)]),
  ],
  compare: (a: string, b: string, runDir?: string) => [
    'compare',
    operand(a),
    operand(b),
    ...(runDir === undefined ? [] : ['--run', operand(runDir)]),
  ],
  deleteCheckpoints: (runDir: string, files: readonly string[], allowBest = false) => [
    'delete-checkpoints',
    '--run',
    operand(runDir),
    ...(allowBest ? ['--allow-best'] : []),
    // After `--`, nothing is an option, whatever the file names look like.
    '--',
    ...files,
  ],
  verify: (runDir: string) => ['verify', '--run', operand(runDir)],
  /** Thumbnails of files inside `root`, named relative to it; after `--`, whatever the names look like. */
  thumbs: (root: string, files: readonly string[], maxBytes?: number) => [
    'thumbs',
    operand(root),
    ...(maxBytes === undefined ? [] : ['--max-bytes', String(maxBytes)]),
    '--',
    ...files,
  ],
};

/** The absolute path of a manifest entry on the target (run directories are POSIX on targets). */
export function checkpointPath(runDir: string, file: string): string {
  return path.posix.isAbsolute(file) ? file : path.posix.join(runDir, file);
}

// ---- result types (the CLI contract of issue 6) ----

export interface TensorInfo {
  name: string;
  shape: number[];
  dtype: string;
  elements: number;
  /** The module the tensor belongs to, as the runner names it (e.g. `backbone.layer1.0.conv1`). */
  module: string;
  /** The group the explorer shows it in: `backbone.layer1`, `head`, `optimizer`, `run state`. */
  group: string;
  /** From the run's spec: false for a frozen part, true for a trained one; null when unknown. */
  trainable: boolean | null;
}

export interface InspectResult {
  file: string;
  bytes: number | null;
  sha256: string | null;
  tensors: TensorInfo[];
  total_elements: number;
  /** The head's output size, when the runner found the head. */
  head_out?: number | null;
  /** Whether head_out equals the run's number of classes (only with --run). */
  head_matches_classes?: boolean | null;
}

export interface PerClass {
  class: string;
  precision: number | null;
  recall: number | null;
  support: number;
}

export interface EvalResult {
  ckpt: string;
  data: string;
  num_images: number;
  accuracy: number | null;
  loss: number | null;
  classes: string[];
  per_class: PerClass[];
  /** confusion[true][predicted] */
  confusion: number[][];
  /** Top-5 accuracy (1 by definition with 5 classes or fewer); null from a runner before it. */
  top5: number | null;
  /** Per-image records (files relative to `data`), bounded by the runner: `predictions_kept` says how. */
  predictions: PredictionRecord[];
  predictions_kept: PredictionsKept | null;
  skipped: { file: string; reason: string }[];
  evaluated_at: number | null;
}

/** One thumbnail of `thumbs`: a base64 JPEG, or why there is none. */
export interface Thumb {
  file: string;
  jpeg?: string;
  error?: string;
  /** Over the call's byte budget: ask again. */
  leftOut?: boolean;
}

export interface ExportResult {
  file: string;
  format: ExportFormat;
  bytes: number | null;
  input_shape: number[];
  /** `<name>.preprocess.json` beside the model: its input's preprocessing and its class names (an older
   * runner writes none). */
  preprocessFile?: string;
}

export interface TensorDiff {
  name: string;
  shape: number[];
  l2_diff: number | null;
  rel_change: number | null;
  frozen: boolean | null;
  /** The runner's kind (`optimizer`, `meta`, ...), when it says. */
  kind?: string;
}

export interface CompareResult {
  tensors: TensorDiff[];
  only_in_a: string[];
  only_in_b: string[];
  shape_mismatch: string[];
  summary: { tensors: number; changed: number; unchanged: number; frozen_max_l2: number | null };
}

export interface DeleteResult {
  deleted: string[];
  kept: string[];
}

export interface VerifyEntry {
  file: string;
  exists: boolean;
  bytes_ok: boolean | null;
  sha256_ok: boolean | null;
  /** The runner's `problem` text, when the file is not usable. */
  reason?: string;
}

// ---- checking what came back ----

/** Raised when a runner's output does not have the promised shape (another runner version). */
export class RunnerOutputError extends WordedError {
  constructor(command: string, detail: string) {
    super((t) =>
      t(
        "runner {0} printed an unexpected result ({1}); is the runner on the target the extension's version?",
        command,
        detail,
      ),
    );
    this.name = 'RunnerOutputError';
  }
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const numOrNull = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const boolOrNull = (v: unknown): boolean | null => (typeof v === 'boolean' ? v : null);
const strList = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const shapeOf = (v: unknown): number[] =>
  Array.isArray(v) ? v.filter((x): x is number => typeof x === 'number' && Number.isInteger(x)) : [];

function need<T>(cmd: string, out: unknown, field: string, check: (v: unknown) => v is T): T {
  if (!isObj(out)) throw new RunnerOutputError(cmd, 'not a JSON object');
  const v = out[field];
  if (!check(v)) throw new RunnerOutputError(cmd, `field "${field}" missing or of the wrong type`);
  return v;
}
const isArr = (v: unknown): v is unknown[] => Array.isArray(v);
const isStr = (v: unknown): v is string => typeof v === 'string';

/** Normalizes `inspect`'s output; throws RunnerOutputError when it lacks its tensors. */
export function toInspectResult(out: unknown): InspectResult {
  const tensors = need('inspect', out, 'tensors', isArr)
    .filter(isObj)
    .map((t): TensorInfo => {
      const name = typeof t.name === 'string' ? t.name : '?';
      const shape = shapeOf(t.shape);
      return {
        name,
        shape,
        dtype: typeof t.dtype === 'string' ? t.dtype : '?',
        elements: numOrNull(t.elements) ?? shape.reduce((a, b) => a * b, 1),
        module: typeof t.module === 'string' ? t.module : '',
        group: groupOf(name, typeof t.kind === 'string' ? t.kind : undefined),
        trainable: boolOrNull(t.trainable),
      };
    });
  const o = out as Record<string, unknown>;
  return {
    file: typeof o.file === 'string' ? o.file : '',
    bytes: numOrNull(o.bytes),
    sha256: typeof o.sha256 === 'string' ? o.sha256 : null,
    tensors,
    total_elements: numOrNull(o.total_elements) ?? tensors.reduce((a, t) => a + t.elements, 0),
    head_out: numOrNull(o.head_out),
    head_matches_classes: boolOrNull(o.head_matches_classes),
  };
}

/**
 * The explorer's group for a tensor: network tensors by their top two name parts
 * (`backbone.layer1.0.conv1.weight` -> `backbone.layer1`, `head.weight` -> `head`); the runner's
 * `kind` (or the name, for an older runner) puts optimizer state and counters in their own groups.
 */
export function groupOf(name: string, kind?: string): string {
  if (kind === 'optimizer') return 'optimizer';
  if (kind === 'meta') return 'run state';
  if (kind === undefined) {
    if (/^(loss_scale\.|epoch_num$|step_num$|steps_per_epoch$|total_steps$)/.test(name)) return 'run state';
    if (/^(moments|accum|adam_[mv]|global_step|learning_rate|momentum|beta[12]_power)\b/.test(name)) return 'optimizer';
  }
  const parts = name.split('.');
  if (parts.length <= 2) return parts[0];
  return parts[0] === 'backbone' ? `${parts[0]}.${parts[1]}` : parts[0];
}

export function toEvalResult(out: unknown): EvalResult {
  const classes = strList(need('eval', out, 'classes', isArr));
  const o = out as Record<string, unknown>;
  const confusion = Array.isArray(o.confusion)
    ? o.confusion.map((row) => (Array.isArray(row) ? row.map((c) => (typeof c === 'number' ? c : 0)) : []))
    : [];
  return {
    ckpt: typeof o.ckpt === 'string' ? o.ckpt : '',
    data: typeof o.data === 'string' ? o.data : '',
    num_images: numOrNull(o.num_images) ?? 0,
    accuracy: numOrNull(o.accuracy),
    loss: numOrNull(o.loss),
    classes,
    per_class: (Array.isArray(o.per_class) ? o.per_class : []).filter(isObj).map((p) => ({
      class: typeof p.class === 'string' ? p.class : '?',
      precision: numOrNull(p.precision),
      recall: numOrNull(p.recall),
      support: numOrNull(p.support) ?? 0,
    })),
    confusion,
    top5: numOrNull(o.top5),
    predictions: toPredictionRecords(o.predictions, classes.length),
    predictions_kept: Array.isArray(o.predictions)
      ? toPredictionsKept(o.predictions_kept, (o.predictions as unknown[]).length)
      : null,
    skipped: (Array.isArray(o.skipped) ? o.skipped : [])
      .filter(isObj)
      .map((s) => ({ file: String(s.file ?? ''), reason: String(s.reason ?? '') })),
    evaluated_at: numOrNull(o.evaluated_at),
  };
}

export function toExportResult(out: unknown): ExportResult {
  const file = need('export', out, 'file', isStr);
  const o = out as Record<string, unknown>;
  return {
    file,
    format: o.format === 'onnx' ? 'onnx' : 'mindir',
    bytes: numOrNull(o.bytes),
    input_shape: shapeOf(o.input_shape),
    preprocessFile: isStr(o.preprocess_file) ? o.preprocess_file : undefined,
  };
}

/** `compare`'s shape_mismatch entries ({name, shape_a, shape_b}) as "name: [3,512] vs [2,512]". */
function shapeMismatches(v: unknown): string[] {
  if (!Array.isArray(v)) return [];
  return v.flatMap((m) => {
    if (typeof m === 'string') return [m];
    if (!isObj(m) || typeof m.name !== 'string') return [];
    const shape = (x: unknown) => (Array.isArray(x) ? `[${x.join(',')}]` : '?');
    return [`${m.name}: ${shape(m.shape_a)} vs ${shape(m.shape_b)}`];
  });
}

export function toCompareResult(out: unknown): CompareResult {
  const tensors = need('compare', out, 'tensors', isArr)
    .filter(isObj)
    .map((t) => ({
      name: typeof t.name === 'string' ? t.name : '?',
      shape: shapeOf(t.shape),
      l2_diff: numOrNull(t.l2_diff),
      rel_change: numOrNull(t.rel_change),
      frozen: boolOrNull(t.frozen),
      ...(typeof t.kind === 'string' ? { kind: t.kind } : {}),
    }));
  const o = out as Record<string, unknown>;
  const s = isObj(o.summary) ? o.summary : {};
  const changed = tensors.filter((t) => (t.l2_diff ?? 0) > 0).length;
  return {
    tensors,
    only_in_a: strList(o.only_in_a),
    only_in_b: strList(o.only_in_b),
    shape_mismatch: shapeMismatches(o.shape_mismatch),
    summary: {
      tensors: numOrNull(s.tensors) ?? tensors.length,
      changed: numOrNull(s.changed) ?? changed,
      unchanged: numOrNull(s.unchanged) ?? tensors.length - changed,
      frozen_max_l2: numOrNull(s.frozen_max_l2),
    },
  };
}

export function toVerifyEntries(out: unknown): VerifyEntry[] {
  // The runner prints {run_dir, ok, checkpoints: [...]}; a bare list or {entries} is taken too.
  const list = Array.isArray(out) ? out : isObj(out) ? [out.checkpoints, out.entries].find(Array.isArray) : undefined;
  if (!list) throw new RunnerOutputError('verify', 'no list of checkpoints');
  return list.filter(isObj).map((e) => ({
    file: typeof e.file === 'string' ? e.file : '?',
    exists: e.exists === true,
    bytes_ok: boolOrNull(e.bytes_ok),
    sha256_ok: boolOrNull(e.sha256_ok),
    ...(typeof e.problem === 'string'
      ? { reason: e.problem }
      : typeof e.reason === 'string'
        ? { reason: e.reason }
        : {}),
  }));
}

// ---- the commands ----

export async function inspectCheckpoint(
  runner: Runner,
  ckpt: string,
  runDir?: string,
  opts?: RunOptions,
): Promise<InspectResult> {
  return toInspectResult(await runRunner(runner, checkpointArgs.inspect(ckpt, runDir), opts));
}

export async function evaluateCheckpoint(
  runner: Runner,
  runDir: string,
  ckpt: string,
  o: { data?: string; batchSize?: number } = {},
  opts?: RunOptions,
): Promise<EvalResult> {
  return toEvalResult(await runRunner(runner, checkpointArgs.eval(runDir, ckpt, o), opts));
}

export async function exportCheckpoint(
  runner: Runner,
  runDir: string,
  ckpt: string,
  format: ExportFormat,
  out?: string,
  opts?: RunOptions,
): Promise<ExportResult> {
  return toExportResult(await runRunner(runner, checkpointArgs.export(runDir, ckpt, format, out), opts));
}

export async function compareCheckpoints(
  runner: Runner,
  a: string,
  b: string,
  runDir?: string,
  opts?: RunOptions,
): Promise<CompareResult> {
  return toCompareResult(await runRunner(runner, checkpointArgs.compare(a, b, runDir), opts));
}

export async function deleteCheckpoints(
  runner: Runner,
  runDir: string,
  files: readonly string[],
  allowBest = false,
  opts?: RunOptions,
): Promise<DeleteResult> {
  const out = await runRunner(runner, checkpointArgs.deleteCheckpoints(runDir, files, allowBest), opts);
  return {
    deleted: strList(need('delete-checkpoints', out, 'deleted', isArr)),
    kept: strList((out as Record<string, unknown>).kept),
  };
}

export function toThumbs(out: unknown): Thumb[] {
  return need('thumbs', out, 'thumbs', isArr)
    .filter(isObj)
    .filter((t) => typeof t.file === 'string')
    .map((t) => ({
      file: t.file as string,
      ...(typeof t.jpeg === 'string' && /^[A-Za-z0-9+/=]*$/.test(t.jpeg) ? { jpeg: t.jpeg } : {}),
      ...(typeof t.error === 'string' ? { error: t.error } : {}),
      ...(t.left_out === true ? { leftOut: true } : {}),
    }));
}

/** Thumbnails of image files inside a data folder on the runner's machine (the predictions gallery). */
export async function fetchThumbs(
  runner: Runner,
  root: string,
  files: readonly string[],
  opts?: RunOptions,
): Promise<Thumb[]> {
  return toThumbs(await runRunner(runner, checkpointArgs.thumbs(root, files), opts));
}

export async function verifyCheckpoints(runner: Runner, runDir: string, opts?: RunOptions): Promise<VerifyEntry[]> {
  return toVerifyEntries(await runRunner(runner, checkpointArgs.verify(runDir), opts));
}

/** The classes an eval folder lacks and has extra, from the runner's `bad_input` error; undefined otherwise. */
export function classMismatch(e: unknown): { missing: string[]; extra: string[]; message: string } | undefined {
  if (!(e instanceof RunnerError) || e.info?.kind !== 'bad_input') return undefined;
  const missing = strList(e.info.missing);
  const extra = strList(e.info.extra);
  if (missing.length === 0 && extra.length === 0) return undefined;
  return { missing, extra, message: e.message };
}
