// The runner's event protocol (DESIGN.md, "Events"): one JSON object per line of events.jsonl
// and of `attach` output. Readers ignore unknown types and fields, so every consumer must cope
// with an `UnknownEvent` and with extra fields on the known ones.

/** Fields every event carries. `seq` is contiguous from 1 within a run; `t` is unix seconds. */
export interface EventEnvelope<T extends string = string> {
  v: number;
  seq: number;
  t: number;
  type: T;
}

/** Metric name to value, e.g. `{ val_acc: 0.91, val_loss: 0.3 }`. */
export type Metrics = Record<string, number | null>;

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
}

export interface StepEvent extends EventEnvelope<'step'> {
  epoch: number;
  /** Global step, from 1. */
  step: number;
  loss: number;
  lr: number;
  /** Null when the run has no loss scaling. */
  loss_scale: number | null;
  /** The update was skipped because gradients overflowed. */
  overflow: boolean;
  step_ms: number;
  img_per_s: number;
}

export interface EvalEvent extends EventEnvelope<'eval'> {
  epoch: number;
  step: number;
  val_loss: number;
  val_acc: number;
  /** Indexed like `run_started.classes`. */
  per_class_acc: number[];
  /** confusion[true][predicted], indexed like `run_started.classes`. */
  confusion: number[][];
}

export interface EpochEndEvent extends EventEnvelope<'epoch_end'> {
  epoch: number;
  train_loss: number;
  overflow_count: number;
  epoch_s: number;
}

export interface CheckpointEvent extends EventEnvelope<'checkpoint'> {
  file: string;
  epoch: number;
  step: number;
  metrics: Metrics;
  bytes: number;
  sha256: string;
  best: boolean;
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

export interface WarningEvent extends EventEnvelope<'warning'> {
  code: string;
  message: string;
  details: unknown;
}

export type FinishStatus = 'completed' | 'stopped' | 'failed';

export interface RunError {
  kind: string;
  message: string;
  trace_tail: string | null;
}

/** A kept checkpoint, as `run_finished.best` names it. */
export interface CheckpointRef {
  file: string;
  epoch: number;
  step: number;
  metrics: Metrics;
}

export interface RunFinishedEvent extends EventEnvelope<'run_finished'> {
  status: FinishStatus;
  error: RunError | null;
  best: CheckpointRef | null;
  final: Metrics | null;
}

export type KnownEvent =
  | RunStartedEvent
  | StepEvent
  | EvalEvent
  | EpochEndEvent
  | CheckpointEvent
  | DeviceEvent
  | WarningEvent
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
  'checkpoint',
  'device',
  'warning',
  'run_finished',
]);

/**
 * Checks the envelope only: payloads come from our own runner and readers tolerate missing
 * fields, while a bad envelope would break sequencing.
 */
export function isRunEvent(x: unknown): x is RunEvent {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) return false;
  const e = x as Record<string, unknown>;
  return (
    Number.isInteger(e.v) &&
    Number.isInteger(e.seq) &&
    (e.seq as number) >= 1 &&
    typeof e.t === 'number' &&
    typeof e.type === 'string' &&
    e.type !== ''
  );
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
  pid: number | null;
  host: string;
  started_at: number;
  ended_at: number | null;
  exit_code: number | null;
}
