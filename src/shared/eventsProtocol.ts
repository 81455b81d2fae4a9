// The runner's event protocol (DESIGN.md, "Events"): one JSON object per line of events.jsonl
// and of `attach` output. Readers ignore unknown types and fields, so every consumer must cope
// with an `UnknownEvent` and with extra fields on the known ones. Above 450 lines on purpose: every
// event's type and its field checks stay in this one file, so the protocol is read in one place.

/** Fields every event carries. `seq` is contiguous from 1 within a run; `t` is unix seconds. */
export interface EventEnvelope<T extends string = string> {
  v: number;
  seq: number;
  t: number;
  type: T;
}

/** Metric name to value, e.g. `{ val_acc: 0.91, val_loss: 0.3 }`; `reason` says why a
 * checkpoint was saved out of turn ("requested", "stopped"). NaN/Inf arrive as null. */
export type Metrics = Record<string, number | string | null>;

export interface RunStartedEvent extends EventEnvelope<'run_started'> {
  run_id: string;
  spec: Record<string, unknown>;
  classes: string[];
  num_train: number;
  num_val: number;
  steps_per_epoch: number;
  total_steps: number;
  versions: Record<string, string>;
  /** Where it trains; the runner owns its shape, readers only display it. */
  device: unknown;
  /** batch_size times the number of devices. */
  global_batch?: number;
  /** The AMP level and loss scaling actually used (may differ from the spec, with a warning). */
  amp?: { level: string; loss_scale: string };
  /** Set when this process resumed from a checkpoint (the log then holds an earlier run_started). */
  resumed_from?: { file: string; step: number } | null;
  /** What model.pretrained loaded (docs/protocol.md); `source`/`sha256` say where the weights came from. */
  pretrained?: PretrainedInfo | null;
  /** The evaluation preprocessing used (model.preprocess, `auto` resolved); checkpoints record it too. */
  preprocess?: PreprocessInfo;
}

/** run_started's `pretrained`: the runner owns the load report's lists; these are the fields readers use. */
export interface PretrainedInfo {
  file: string;
  origin: string;
  variant: string;
  /** model.pretrained as written: a path, `mindcv:<model>` or `hf-hub:<org>/<repo>[:<file>]`. */
  source?: string;
  sha256?: string;
  /** For a named source: the URL it was downloaded from, and whether the cache already had it. */
  url?: string;
  cached?: boolean;
}

/** The preprocessing a run used (runner/ascend_finetune/models/preprocess.py). Runs recorded before
 * the per-weight values have only the first seven fields. */
export interface PreprocessInfo {
  /** The preset the values start from. */
  name: 'imagenet' | 'mindcv' | 'torchvision' | 'timm';
  interpolation: 'bilinear' | 'bicubic';
  crop_pct: number;
  /** `round256`: round(size * 256 / 224), the runner's own; `floor`: floor(size / crop_pct). */
  rounding: 'round256' | 'floor';
  /** In 0..255 pixel units. */
  mean: number[];
  std: number[];
  /** How it was chosen, or "model.preprocess" when the spec named a preset. */
  why: string;
  crop_mode?: 'center' | 'squash';
  /** The weights' own training size (their config's input_size), if they say. */
  input_size?: number | null;
  /** Where the values come from: `preset`, `hub_config` (URL in `config`), `mindcv_cfg`. */
  source?: string;
  config?: string | null;
  /** The fields model.preprocess's object set. */
  overridden?: string[];
}

export interface StepEvent extends EventEnvelope<'step'> {
  epoch: number;
  /** Global step, from 1; for a sink (several steps in one event), its last step. */
  step: number;
  /**
   * A sink's first step (sink mode on Ascend): the event covers `first_step`..`step`, and its other
   * fields are the last step's unless said otherwise. Absent when the event covers one step.
   */
  first_step?: number;
  /** A sink's mean loss over its steps with a finite loss (null if none). Absent for one step. */
  mean_loss?: number | null;
  /** Null when the loss was NaN or Inf. */
  loss: number | null;
  /** The learning rate this step's update used. */
  lr: number;
  /** Null when the run has no loss scaling. */
  loss_scale: number | null;
  /** Gradients were not finite (the loss-scale overflow): the update was skipped. */
  overflow: boolean;
  /** The update was skipped (an overflow, or a non-finite loss). */
  skipped?: boolean;
  /** A sink's steps that overflowed, 0..its size (`overflow` is its last step's). Absent for one step. */
  overflows?: number;
  /** A sink's steps that applied no update, 0..its size (`skipped` is its last step's). Absent for one step. */
  skipped_updates?: number;
  /** Wall time since the previous step ended, data wait included (a sink's: per step). */
  step_ms: number;
  /** Time spent waiting for the batch (absent for a sink: the device queue hides it). */
  data_ms?: number;
  img_per_s: number | null;
  /**
   * Training accuracy (0..1) of the event's batches, from the train step's own forward pass (before
   * its update; no second pass): for a sink or an accumulation, over all its batches; on several
   * ranks, rank 0's share. Mixup/cutmix count the label with the largest share. Absent from older runners.
   */
  train_acc?: number | null;
}

export interface EvalEvent extends EventEnvelope<'eval'> {
  epoch: number;
  step: number;
  val_loss: number | null;
  val_acc: number;
  /** Top-5 accuracy; 1 by definition with 5 classes or fewer. Absent from runners before it. */
  val_top5?: number;
  /** Indexed like `run_started.classes`; null for a class with no validation images. */
  per_class_acc: (number | null)[];
  /** confusion[true][predicted], indexed like `run_started.classes`; null above 256 classes,
   * when it is in `confusion_file` (a JSON file relative to the run directory) instead. */
  confusion: number[][] | null;
  confusion_file?: string;
  /** Validation images whose logits were NaN/Inf (counted as wrong). */
  nonfinite?: number;
  /** With `train.ema`: the same validation set scored with the weights' moving average. */
  ema?: EmaEval | null;
}

/** The EMA weights' eval, beside the raw weights' (`eval.ema`). */
export interface EmaEval {
  val_loss: number | null;
  val_acc: number;
  per_class_acc: (number | null)[];
}

/** The plateau schedule lowered the learning rate after an epoch (`train.lr_schedule: plateau`). */
export interface LrReducedEvent extends EventEnvelope<'lr_reduced'> {
  epoch: number;
  step: number;
  /** The rate from the next update on, and the one before. */
  lr: number;
  previous_lr: number;
  /** The metric watched, its best value so far and the epoch of that best. */
  metric: string;
  best: number | null;
  best_epoch: number;
}

export interface EpochEndEvent extends EventEnvelope<'epoch_end'> {
  epoch: number;
  train_loss: number | null;
  overflow_count: number;
  epoch_s: number;
}

/** model.unfreeze changed the trainable set before `epoch`'s first step (`step` steps done). */
export interface UnfreezeEvent extends EventEnvelope<'unfreeze'> {
  epoch: number;
  step: number;
  /** The model.freeze rule now in effect. */
  freeze: string;
  /** The parts that became trainable, from the input side: `stem`, `layer1` ... `layer4`. */
  unfrozen: string[];
  /** Trainable parameter tensors after the change. */
  trainable_params: number;
}

export interface CheckpointEvent extends EventEnvelope<'checkpoint'> {
  file: string;
  epoch: number;
  step: number;
  metrics: Metrics;
  bytes: number;
  sha256: string;
  created_at?: number;
  best: boolean;
  /** `ema`: the weights' moving average (train.ema), weights only; absent for the run's own weights. */
  kind?: string;
}

export interface DeviceSample {
  id: number;
  util: number | null;
  hbm_used_mb: number | null;
  hbm_total_mb: number | null;
  temp_c: number | null;
  power_w: number | null;
}

export interface DeviceEvent extends EventEnvelope<'device'> {
  devices: DeviceSample[];
}

/** Host telemetry where there is no `npu-smi` (a CPU run): from /proc, every device.telemetry_s. */
export interface HostEvent extends EventEnvelope<'host'> {
  /** Busy share of all the host's CPUs since the previous sample, per cent. */
  cpu_pct: number | null;
  /** MemTotal - MemAvailable, and MemTotal, in MB. */
  mem_used_mb: number | null;
  mem_total_mb: number | null;
  /** The training process's resident set, MB. */
  rss_mb: number | null;
  /** The training process's CPU use, per cent of one core (400: four cores busy). */
  proc_cpu_pct?: number | null;
}

/**
 * Set-up before `run_started` that takes a while: `stage: "download"`, the `model.pretrained` source
 * being downloaded into the runner's cache, `done` and `total` bytes (`total` null when the host does
 * not say). Other stages may come from a newer runner.
 */
export interface SetupEvent extends EventEnvelope<'setup'> {
  stage: string;
  source?: string;
  done?: number;
  total?: number | null;
}

export interface WarningEvent extends EventEnvelope<'warning'> {
  code: string;
  message: string;
  details: unknown;
}

export type FinishStatus = 'completed' | 'stopped' | 'failed';

export interface RunError {
  /** bad_spec, bad_input, nonfinite_loss, or the exception's class name. */
  kind: string;
  message: string;
  trace_tail: string | null;
  /** For bad_input: the spec field to fix, and how. */
  path?: string;
  fix?: string;
  /** For bad_spec: every problem with its field path. */
  problems?: { path: string; message: string; fix: string }[];
  /** The cause's stable code and the values its message names (runners before them: missing). */
  code?: string;
  params?: Record<string, unknown>;
}

/** A kept checkpoint, as `run_finished.best` names it. */
export interface CheckpointRef {
  file: string;
  epoch: number;
  step: number;
  metrics: Metrics;
}

/**
 * One reason of a health verdict (docs/protocol.md, `run_finished.health`): a stable `code`, English
 * `message` and `fix` sentences, and the numbers of the message as named parameters.
 */
export interface HealthReason {
  code: string;
  message: string;
  fix: string;
  [param: string]: unknown;
}

/** Whether a run learned something: `problems` when there is at least one reason. */
export interface RunHealth {
  verdict: 'healthy' | 'problems';
  reasons: HealthReason[];
}

export interface RunFinishedEvent extends EventEnvelope<'run_finished'> {
  status: FinishStatus;
  error: RunError | null;
  best: CheckpointRef | null;
  /** epoch, step, total_steps, the last loss, and stop_reason for a stopped run. */
  final: Metrics | null;
  /**
   * The run's verdict; missing from runners before it, null in a rank other than 0. Not checked by
   * `eventProblem` (a bad verdict must not drop the run's end): read it through `runHealth`.
   */
  health?: unknown;
  /** Why early stopping (`train.early_stopping`) ended a completed run before its last epoch. */
  early_stop?: EarlyStop | null;
}

/** `run_finished.early_stop`: the metric stopped improving for `patience` epochs. */
export interface EarlyStop {
  epoch: number;
  metric: string;
  best: number | null;
  best_epoch: number;
  patience: number;
  min_delta: number;
  /** An English sentence saying the above. */
  message: string;
}

/**
 * A health verdict as the runner wrote it (`run_finished.health`, status.json's and `ls`'s
 * `health`), checked: undefined for anything that is not one (null, a wrong verdict, no reasons
 * array). Reasons that are not objects with a string `code` and `message` are dropped; a missing
 * `fix` reads as "". A `problems` verdict whose reasons were all dropped keeps its verdict.
 */
export function runHealth(x: unknown): RunHealth | undefined {
  if (!isObj(x) || (x.verdict !== 'healthy' && x.verdict !== 'problems') || !Array.isArray(x.reasons)) return undefined;
  const reasons: HealthReason[] = [];
  for (const r of x.reasons as unknown[]) {
    if (!isObj(r) || typeof r.code !== 'string' || typeof r.message !== 'string') continue;
    reasons.push({ ...r, code: r.code, message: r.message, fix: typeof r.fix === 'string' ? r.fix : '' });
  }
  return { verdict: reasons.length > 0 ? 'problems' : x.verdict, reasons };
}

export type KnownEvent =
  | RunStartedEvent
  | StepEvent
  | EvalEvent
  | EpochEndEvent
  | UnfreezeEvent
  | CheckpointEvent
  | DeviceEvent
  | HostEvent
  | SetupEvent
  | WarningEvent
  | LrReducedEvent
  | RunFinishedEvent;

export type KnownEventType = KnownEvent['type'];

/** An event of a type this build does not know (a newer runner): pass it on, never fail on it. */
export interface UnknownEvent extends EventEnvelope {
  [field: string]: unknown;
}

export type RunEvent = KnownEvent | UnknownEvent;

const KNOWN_TYPES: ReadonlySet<string> = new Set<KnownEventType>([
  'run_started',
  'step',
  'eval',
  'epoch_end',
  'unfreeze',
  'checkpoint',
  'device',
  'host',
  'setup',
  'warning',
  'lr_reduced',
  'run_finished',
]);

/** The envelope alone: what sequencing needs (seq, t) whatever the type and payload. */
export function hasEventEnvelope(x: unknown): x is EventEnvelope {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) return false;
  const e = x as Record<string, unknown>;
  return (
    Number.isInteger(e.v) &&
    Number.isInteger(e.seq) &&
    (e.seq as number) >= 1 &&
    isNum(e.t) &&
    typeof e.type === 'string' &&
    e.type !== ''
  );
}

/** Field kinds a known event's payload is checked against; a `?` kind also allows null. */
type Kind = 'num' | 'num?' | 'str' | 'bool' | 'obj' | 'obj?' | 'arr' | 'arr?';

const PAYLOADS: Readonly<Record<KnownEventType, Readonly<Record<string, Kind>>>> = {
  run_started: {
    run_id: 'str',
    spec: 'obj',
    classes: 'arr',
    num_train: 'num',
    num_val: 'num',
    steps_per_epoch: 'num',
    total_steps: 'num',
    versions: 'obj',
    global_batch: 'num',
    amp: 'obj',
    resumed_from: 'obj?',
    pretrained: 'obj?',
    preprocess: 'obj',
  },
  step: {
    epoch: 'num',
    step: 'num',
    first_step: 'num',
    mean_loss: 'num?',
    loss: 'num?',
    lr: 'num',
    loss_scale: 'num?',
    overflow: 'bool',
    skipped: 'bool',
    overflows: 'num',
    skipped_updates: 'num',
    step_ms: 'num',
    data_ms: 'num',
    img_per_s: 'num?',
    train_acc: 'num?',
  },
  eval: {
    epoch: 'num',
    step: 'num',
    val_loss: 'num?',
    val_acc: 'num',
    val_top5: 'num',
    per_class_acc: 'arr',
    confusion: 'arr?',
    confusion_file: 'str',
    nonfinite: 'num',
    ema: 'obj?',
  },
  epoch_end: { epoch: 'num', train_loss: 'num?', overflow_count: 'num', epoch_s: 'num' },
  setup: { stage: 'str', source: 'str', done: 'num', total: 'num?' },
  unfreeze: { epoch: 'num', step: 'num', freeze: 'str', unfrozen: 'arr', trainable_params: 'num' },
  checkpoint: {
    file: 'str',
    epoch: 'num',
    step: 'num',
    metrics: 'obj',
    bytes: 'num',
    sha256: 'str',
    created_at: 'num',
    best: 'bool',
    kind: 'str',
  },
  device: { devices: 'arr' },
  host: { cpu_pct: 'num?', mem_used_mb: 'num?', mem_total_mb: 'num?', rss_mb: 'num?', proc_cpu_pct: 'num?' },
  warning: { code: 'str', message: 'str' },
  lr_reduced: { epoch: 'num', step: 'num', lr: 'num', previous_lr: 'num', metric: 'str', best_epoch: 'num' },
  run_finished: { status: 'str', error: 'obj?', best: 'obj?', final: 'obj?', early_stop: 'obj?' },
};

const KIND_WORDS: Readonly<Record<Kind, string>> = {
  num: 'a finite number',
  'num?': 'a finite number or null',
  str: 'a string',
  bool: 'true or false',
  obj: 'an object',
  'obj?': 'an object or null',
  arr: 'an array',
  'arr?': 'an array or null',
};

const FINISH_STATUSES: ReadonlySet<string> = new Set<FinishStatus>(['completed', 'stopped', 'failed']);

/** A finite number (JSON's 1e999 parses to Infinity). */
function isNum(x: unknown): x is number {
  return typeof x === 'number' && Number.isFinite(x);
}

function isObj(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function hasKind(x: unknown, kind: Kind): boolean {
  if (x === null && kind.endsWith('?')) return true;
  switch (kind) {
    case 'num':
    case 'num?':
      return isNum(x);
    case 'str':
      return typeof x === 'string';
    case 'bool':
      return typeof x === 'boolean';
    case 'obj':
    case 'obj?':
      return isObj(x);
    case 'arr':
    case 'arr?':
      return Array.isArray(x);
  }
}

/** Steps a step event covers: `step - first_step + 1` for a sink, else 1. */
export function stepsCovered(e: { step?: unknown; first_step?: unknown }): number {
  return isNum(e.first_step) && isNum(e.step) && e.first_step <= e.step ? e.step - e.first_step + 1 : 1;
}

const isCount = (v: unknown, max: number): v is number => isNum(v) && Number.isInteger(v) && v >= 0 && v <= max;

/**
 * Overflowed steps a step event stands for: a sink's `overflows` (every step of its range), else 1
 * for `overflow: true` (one step, or an older runner's sink whose flag is its last step's).
 */
export function stepOverflows(e: {
  step?: unknown;
  first_step?: unknown;
  overflow?: unknown;
  overflows?: unknown;
}): number {
  return isCount(e.overflows, stepsCovered(e)) ? e.overflows : e.overflow === true ? 1 : 0;
}

/** Skipped updates a step event stands for (a sink's `skipped_updates`, else its flags), at least its overflows. */
export function stepSkippedUpdates(e: {
  step?: unknown;
  first_step?: unknown;
  overflow?: unknown;
  overflows?: unknown;
  skipped?: unknown;
  skipped_updates?: unknown;
}): number {
  const counted = isCount(e.skipped_updates, stepsCovered(e))
    ? e.skipped_updates
    : e.skipped === true || e.overflow === true
      ? 1
      : 0;
  return Math.max(counted, stepOverflows(e));
}

/**
 * Why a value with a good envelope is still not an event readers can take: a known type with a
 * field of the wrong type (`spec: null`, `epoch: "3"`, `loss: {}`). Missing fields are allowed
 * (readers tolerate them); unknown types and unknown fields pass. Undefined when it is fine.
 */
export function eventProblem(x: EventEnvelope): string | undefined {
  const e = x as unknown as Record<string, unknown>;
  const fields = (PAYLOADS as Record<string, Readonly<Record<string, Kind>>>)[x.type];
  if (fields === undefined) return undefined;
  for (const [field, kind] of Object.entries(fields)) {
    const value = e[field];
    if (value === undefined || hasKind(value, kind)) continue;
    const got = typeof value === 'number' ? String(value) : JSON.stringify(value).slice(0, 40);
    return `${x.type} seq ${x.seq}: ${field} is ${got}, expected ${KIND_WORDS[kind]}`;
  }
  if (x.type === 'step' && isNum(e.first_step) && isNum(e.step) && !(e.first_step <= e.step)) {
    return `step seq ${x.seq}: first_step ${e.first_step} is after step ${e.step}`;
  }
  if (x.type === 'step') {
    const size = stepsCovered(e);
    for (const field of ['overflows', 'skipped_updates'] as const) {
      const v = e[field];
      if (v !== undefined && !isCount(v, size))
        return `step seq ${x.seq}: ${field} ${String(v)} is not a whole number from 0 to the event's ${size} step(s)`;
    }
  }
  if (x.type === 'run_finished' && e.status !== undefined && !FINISH_STATUSES.has(e.status as string)) {
    return `run_finished seq ${x.seq}: status ${JSON.stringify(e.status).slice(0, 40)} is not one of completed, stopped, failed`;
  }
  return undefined;
}

/**
 * An event readers can take: a good envelope (a bad one would break sequencing) and, for a known
 * type, payload fields of the right types where present (`eventProblem`). Readers skip the rest.
 */
export function isRunEvent(x: unknown): x is RunEvent {
  return hasEventEnvelope(x) && eventProblem(x) === undefined;
}

/**
 * Narrows to the known union so that `switch (e.type)` sees each payload (an `UnknownEvent`
 * in the union would widen every case to `unknown`).
 */
export function isKnownEvent(e: RunEvent): e is KnownEvent {
  return KNOWN_TYPES.has(e.type);
}

export type RunState = 'running' | 'completed' | 'stopped' | 'failed' | 'lost';

/** `status.json` of a run directory. Times are unix seconds. */
export interface RunStatus {
  run_id: string;
  state: RunState;
  /** null from `launch` until the training process writes its own. */
  pid: number | null;
  /** The process's start time (clock ticks since boot): tells a reused pid apart. */
  pid_start?: number | null;
  host: string;
  started_at: number;
  ended_at: number | null;
  exit_code: number | null;
  /** After a failure, run_finished's `error`; null otherwise (missing before the field existed). */
  error?: RunError | null;
  /** The health verdict once the run ended (`runHealth` reads it), null while running. */
  health?: unknown;
}

/** A usable `run_finished.early_stop` (its message is shown as written). */
export function isEarlyStop(x: unknown): x is EarlyStop {
  return isObj(x) && typeof x.message === 'string' && isNum(x.epoch);
}
