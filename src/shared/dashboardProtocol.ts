// Messages between the dashboard UI (webview/dashboard, in a VS Code webview or a browser tab) and
// its host (src/vscode/dashboardPanel.ts, or the `ascend-finetune dashboard` HTTP/WebSocket server).
// The host owns the data: it reads the run's events, keeps the series, downsamples them to the
// chart's width and sends snapshots and appends. The UI is untrusted input for the host: every
// UiMessage is validated (src/shared/dashboardValidate.ts) before it is acted on, and no message
// carries a path or a command the UI could use to reach outside its runs.
//
// Series are columnar and share one step axis per run: `steps[i]` is the global step of row i and
// every other column of the same block has the same length. Missing values are null.

/** Identifies one run inside one dashboard (an opaque short id chosen by the host, never a path). */
export type RunKey = string;

export interface DashboardHeader {
  key: RunKey;
  name: string;
  /** The user's notes on the run (meta.json, at most 10 KB): plain text. Absent from an older host. */
  notes?: string;
  /** The user's tags on the run (meta.json). Absent from an older host. */
  tags?: string[];
  /** launching | running | reconnecting | finished | lost (see src/core/runs/state.ts) */
  phase: string;
  status?: 'completed' | 'stopped' | 'failed';
  target: string;
  backbone?: string;
  /** The AMP level and loss-scale mode actually used (run_started.amp). */
  ampLevel?: string;
  lossScaleMode?: string;
  /** The header's AMP words, decided with the AMP card (src/core/dashboard/ampScaling.ts). */
  ampSummary?: string;
  /** The run's health verdict once it ended (run_finished.health); null before, or from an older runner. */
  health?: { verdict: 'healthy' | 'problems'; reasons: { code: string; message: string; fix: string }[] } | null;
  epoch?: number;
  totalEpochs?: number;
  step?: number;
  totalSteps?: number;
  /** unix seconds */
  startedAt?: number;
  lastEventAt?: number;
  /** seconds, null when unknown */
  etaS?: number | null;
  bestValAcc?: number | null;
  bestCheckpoint?: string | null;
  globalBatch?: number;
  /** run_started.steps_per_epoch (the epoch x axis). */
  stepsPerEpoch?: number;
  classes: string[];
  /** Why a failed run failed; `path` and `fix` name the spec field and the fix for bad input. */
  error?: { kind: string; message: string; traceTail: string | null; path?: string; fix?: string } | null;
}

/** Step-level series, one row per kept step (downsampled for long runs). */
export interface StepBlock {
  steps: number[];
  loss: (number | null)[];
  lr: (number | null)[];
  lossScale: (number | null)[];
  /**
   * The row's overflowed steps (their updates were skipped): 0 or 1 for a step, up to a sink's size
   * for a sink row (`firstStep` set). Every row with an overflow is kept.
   */
  overflow: number[];
  imgPerS: (number | null)[];
  stepMs: (number | null)[];
  dataMs: (number | null)[];
  /**
   * Per row, the first step of a sink (one event for several steps: Ascend's sink mode), else
   * null; `loss` is then the sink's mean loss. Absent when no row of the block is a sink.
   */
  firstStep?: (number | null)[];
  /** Training accuracy (0..1) of the row's batches (step.train_acc); null from an older runner. Absent from an older host. */
  trainAcc?: (number | null)[];
  /** The row's event time, unix seconds (the wall-clock x axis). Absent from an older host. */
  t?: number[];
}

/** One row per eval event. */
export interface EvalBlock {
  steps: number[];
  epochs: number[];
  valLoss: (number | null)[];
  valAcc: (number | null)[];
  /** Top-5 accuracy (1 by definition with 5 classes or fewer); absent from an older host, null from an older runner. */
  valTop5?: (number | null)[];
  /** With `train.ema`: the EMA weights' val accuracy (`eval.ema.val_acc`), null on rows without one; absent from an older host. */
  valAccEma?: (number | null)[];
  /** perClassAcc[row][classIndex] */
  perClassAcc: (number | null)[][];
}

/** One row per device event; device columns keyed by device id. */
export interface DeviceBlock {
  /** The run's step at the time of the sample (the last step seen before it). */
  steps: number[];
  t: number[];
  devices: Record<
    string,
    {
      util: (number | null)[];
      hbmUsedMb: (number | null)[];
      hbmTotalMb: (number | null)[];
      tempC: (number | null)[];
      powerW: (number | null)[];
    }
  >;
}

/** One row per `host` event (a machine without NPUs: CPU, memory, the training process's RSS). */
export interface HostBlock {
  /** The run's step at the time of the sample (the last step seen before it). */
  steps: number[];
  t: number[];
  /** Busy share of all CPUs, per cent. */
  cpuPct: (number | null)[];
  /** The training process's CPU, per cent of one core. */
  procCpuPct: (number | null)[];
  memUsedMb: (number | null)[];
  memTotalMb: (number | null)[];
  rssMb: (number | null)[];
}

/** A setting as the config panel shows it: a dotted path (`train.lr`) and its value as text. */
export interface ConfigRow {
  path: string;
  value: string;
}

/** Compare Runs' config diff: one row per spec field, one value per compared run (in `runs` order). */
export interface ConfigDiffRow {
  path: string;
  /** As the cell shows it; "—" where that run lacks the field. */
  values: string[];
  differs: boolean;
}

/** Compare Runs' config tab: every spec field of the compared runs, the differing ones marked. */
export interface ConfigDiff {
  /** The runs' keys, in column order. */
  runs: RunKey[];
  rows: ConfigDiffRow[];
}

/** The config panel: what the run was started with, as the run directory records it. */
export interface RunConfig {
  /** Where `spec` was read: the run's spec.json (a local run), or its run_started event (any target). */
  specSource: 'spec.json' | 'run_started';
  /** The resolved spec, flattened to dotted paths. */
  spec: ConfigRow[];
  /** run_started.pretrained (source, sha256, download URL, origin, layout); empty: random initialisation. */
  weights: ConfigRow[];
  /** run_started.preprocess: the evaluation resize and normalisation the weights expect. */
  preprocess: ConfigRow[];
  /** run_started.versions (runner, MindSpore, Python) and where it trained (run_started.device). */
  versions: ConfigRow[];
  /** The settings cut off to keep the message bounded (0 normally). */
  truncated: number;
}

export interface AmpHealth {
  /** Loss scaling protects this run (fp16 with a scale); when false the card says so in one line. */
  applies?: boolean;
  /** Why it does not apply (an O0 run), for that line. */
  notApplicable?: string;
  currentScale: number | null;
  overflowsTotal: number;
  /** Overflows among the last `window` steps. */
  overflowsRecent: number;
  window: number;
  skippedTotal: number;
  /** Which known pattern the run shows, most serious first; `ok` when none. */
  diagnosis: AmpDiagnosis[];
}

export interface AmpDiagnosis {
  code: 'ok' | 'startup_burst' | 'scale_pinned_low' | 'overflow_storm' | 'nan_without_overflow' | 'no_scaling';
  severity: 'info' | 'warning' | 'error';
  /** Plain-language explanation and suggested fix. */
  message: string;
  fix?: string;
}

/** A training event drawn as a labelled marker on the loss and lr charts, at the step it happened. */
export interface RunMark {
  step: number;
  kind: 'unfreeze' | 'lr_reduced';
  /** Short English text beside the marker, e.g. `unfreeze layer4` or `lr 0.01→0.001`. */
  label: string;
  /**
   * What the label names, for the page to say it in its own language: unfreeze `[stages]`
   * (`stem+layer1`), lr_reduced `[previous lr, new lr]`. Absent from an older host (then `label`).
   */
  args?: string[];
}

export interface RunNotice {
  seq: number;
  t: number;
  level: 'warning' | 'error';
  code: string;
  message: string;
}

export interface RunData {
  header: DashboardHeader;
  steps: StepBlock;
  evals: EvalBlock;
  devices: DeviceBlock;
  amp: AmpHealth;
  notices: RunNotice[];
  /** unfreeze and lr_reduced events, in step order; absent from an older host. */
  marks?: RunMark[];
  /** Host telemetry (a run without NPUs); absent from an older host. */
  host?: HostBlock;
  /** The config panel's contents; null before the host knows them, absent from an older host. */
  config?: RunConfig | null;
  /** Compare mode: this run's values of the spec fields that differ between the compared runs. */
  differs?: ConfigRow[];
  /** Total step rows the host holds (before downsampling), and whether `steps` is downsampled. */
  totalStepRows: number;
  downsampled: boolean;
}

/** The step range the UI shows; null ends mean "to the start/end of the run". */
export interface ViewRange {
  min: number | null;
  max: number | null;
}

export type HostMessage =
  /** Everything, for every run of this dashboard (one run, or several in compare mode). Sent on
   * `ready`, when a hidden panel becomes visible, and after a `zoom` (refined for that range). */
  | {
      type: 'snapshot';
      mode: 'single' | 'compare';
      runs: RunData[];
      range: ViewRange;
      revision: number;
      /** Compare mode: the spec fields of the compared runs side by side; absent from an older host. */
      configDiff?: ConfigDiff;
      /** VS Code only: an opaque token the UI keeps in its saved webview state (`vscode.setState`,
       * as `restore`) so that the panel reopens on the same runs after a window reload. */
      restore?: string;
    }
  /** New rows for one run since the last message; the UI appends them (steps ascending). */
  | {
      type: 'append';
      key: RunKey;
      header: DashboardHeader;
      steps?: StepBlock;
      evals?: EvalBlock;
      devices?: DeviceBlock;
      host?: HostBlock;
      /** The config, when it changed since the last message (the run started, spec.json was read). */
      config?: RunConfig;
      amp: AmpHealth;
      notices?: RunNotice[];
      /** Marks since the last message. */
      marks?: RunMark[];
      revision: number;
    }
  /** The host could not read the run (e.g. the connection dropped); shown as a banner. */
  | { type: 'status'; key: RunKey | null; level: 'info' | 'warning' | 'error'; message: string };

export type UiMessage =
  /** The UI is loaded; `width` is the charts' plot width in CSS pixels (for downsampling). */
  | { type: 'ready'; width: number }
  /** The user zoomed (or reset with nulls); the host answers with a refined snapshot. */
  | { type: 'zoom'; min: number | null; max: number | null; width: number }
  /** The plot width changed (panel resized). */
  | { type: 'resize'; width: number }
  /** Save a file the UI produced (CSV text or a chart PNG as a data: URL). The host asks the user
   * where (VS Code: save dialog); the browser host refuses (the browser downloads it itself). */
  | { type: 'export'; format: 'csv' | 'png'; suggestedName: string; data: string };

export const UI_MESSAGE_TYPES = ['ready', 'zoom', 'resize', 'export'] as const;
