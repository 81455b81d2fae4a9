// The series of one run, kept columnar in growable typed arrays so that a million-step run costs
// tens of MB and a snapshot can scan it in milliseconds. Fed by RunEvents in seq order; events at
// or below the last seq seen are ignored, so a re-attach that replays the log doubles nothing.
// NaN stands for null in the float columns (the runner writes NaN/Inf losses as null anyway).
// About 500 lines: one column per series and the one ingest that fills them all (steps, sinks,
// evals, EMA, marks); split, the columns' shared row index would have to cross a module boundary.
import { ENGLISH_WORDING, reasonText, type Wording } from '../runs/runnerCodes';
import { runnerErrorText } from '../runs/runnerErrors';
import type {
  CheckpointEvent,
  EvalEvent,
  HostEvent,
  LrReducedEvent,
  RunError,
  RunEvent,
  RunFinishedEvent,
  RunStartedEvent,
  StepEvent,
  UnfreezeEvent,
} from '../../shared/eventsProtocol';
import {
  isKnownEvent,
  runHealth,
  stepOverflows,
  stepSkippedUpdates,
  type RunHealth,
} from '../../shared/eventsProtocol';
import type {
  DashboardHeader,
  DeviceBlock,
  EvalBlock,
  HostBlock,
  RunConfig,
  RunKey,
  RunMark,
  RunNotice,
  StepBlock,
} from '../../shared/dashboardProtocol';
import { ampScaling } from './ampScaling';
import { runConfig } from './runConfig';
import { applyEvent, applySignal, initialView, type RunView, type TransportSignal } from '../runs/state';

/** A float column that grows by doubling; `length` rows are valid. */
export class Column {
  data: Float64Array;
  length = 0;
  constructor(capacity = 1024) {
    this.data = new Float64Array(capacity);
  }
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Float64Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
  truncate(n: number): void {
    if (n < this.length) this.length = n;
  }
}

/**
 * The step columns the dashboard charts; `overflow` and `skipped` count the row's overflowed and
 * skipped steps: 0 or 1 for a step, up to its size for a sink (one row for several steps).
 */
export const STEP_SERIES = ['loss', 'lr', 'lossScale', 'imgPerS', 'stepMs', 'dataMs', 'trainAcc'] as const;
export type StepSeries = (typeof STEP_SERIES)[number];

export class StepColumns {
  readonly step = new Column();
  readonly loss = new Column();
  readonly lr = new Column();
  readonly lossScale = new Column();
  readonly imgPerS = new Column();
  readonly stepMs = new Column();
  readonly dataMs = new Column();
  readonly trainAcc = new Column();
  /** The row's event time (unix seconds). */
  readonly t = new Column();
  readonly overflow = new Column();
  readonly skipped = new Column();
  /** A sink's first step (one event for several steps), NaN for a row of one step. */
  readonly firstStep = new Column();
  get length(): number {
    return this.step.length;
  }
  all(): Column[] {
    return [
      this.step,
      this.loss,
      this.lr,
      this.lossScale,
      this.imgPerS,
      this.stepMs,
      this.dataMs,
      this.trainAcc,
      this.t,
      this.overflow,
      this.skipped,
      this.firstStep,
    ];
  }
  series(name: StepSeries): Column {
    return this[name];
  }
}

/** Steps the ETA averages over (the first step, which compiles the graph, soon drops out). */
const ETA_STEPS = 50;

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : NaN);
const orNull = (v: number): number | null => (Number.isNaN(v) ? null : v);

/** The run_started facts the header shows (of the latest segment). */
interface StartInfo {
  runId: string;
  backbone?: string;
  ampLevel?: string;
  lossScaleMode?: string;
  initScale?: number;
  globalBatch?: number;
  stepsPerEpoch?: number;
  classes: string[];
  firstStartedAt: number;
  /** The event itself, for the config panel. */
  event: RunStartedEvent;
}

export class RunSeriesStore {
  readonly steps = new StepColumns();
  readonly evals: {
    steps: number[];
    epochs: number[];
    valLoss: (number | null)[];
    valAcc: (number | null)[];
    valTop5: (number | null)[];
    valAccEma: (number | null)[];
    perClassAcc: (number | null)[][];
  } = {
    steps: [],
    epochs: [],
    valLoss: [],
    valAcc: [],
    valTop5: [],
    valAccEma: [],
    perClassAcc: [],
  };
  /** unfreeze and lr_reduced events as chart markers, in step order. */
  readonly marks: RunMark[] = [];
  readonly devices: {
    steps: number[];
    t: number[];
    byId: Map<
      string,
      {
        util: (number | null)[];
        hbmUsedMb: (number | null)[];
        hbmTotalMb: (number | null)[];
        tempC: (number | null)[];
        powerW: (number | null)[];
      }
    >;
  } = {
    steps: [],
    t: [],
    byId: new Map(),
  };
  /** `host` events (a machine without NPUs). */
  readonly host: HostBlock = { steps: [], t: [], cpuPct: [], procCpuPct: [], memUsedMb: [], memTotalMb: [], rssMb: [] };
  readonly notices: RunNotice[] = [];
  /** spec.json as the owner read it (a local run directory), preferred to run_started's spec. */
  private specFile: Record<string, unknown> | undefined;
  private configCache: RunConfig | null | undefined;
  /** Bumped when the config changes (run_started, spec.json): an append carries it then. */
  configRevision = 0;
  view: RunView = initialView();
  start: StartInfo | undefined;
  bestCheckpoint: { file: string; valAcc: number | null } | null = null;
  finished: RunFinishedEvent | undefined;
  /** Totals over the whole log (overflowed and skipped steps, NaN/Inf losses without overflow). */
  overflowsTotal = 0;
  skippedTotal = 0;
  nanWithoutOverflow = 0;
  /** Row index where the latest run segment starts (a resume re-enters the same log). */
  segmentStartRow = 0;
  /** Bumped when rows already sent may have changed (a resume rewound the steps): a snapshot is due. */
  rewinds = 0;

  constructor(
    readonly key: RunKey,
    public meta: { name: string; target: string; notes?: string; tags?: string[] },
  ) {}

  /** The last seq ingested (duplicates at or below it are ignored). */
  lastSeq = 0;

  /**
   * Events in seq order, any batch; returns how many were new. The header's state machine
   * (runState) sees every event except the steps inside a run of consecutive steps, of which it
   * sees the last: it copies its view per event, which was half the ingest time, and a step only
   * moves the phase to running and sets the latest step's fields (the ETA comes from step_ms here).
   */
  ingest(events: Iterable<RunEvent>): number {
    let n = 0;
    let lastStep: StepEvent | undefined;
    for (const e of events) {
      if (e.seq <= this.lastSeq) continue;
      this.lastSeq = e.seq;
      n++;
      if (e.type === 'step') {
        lastStep = e as StepEvent;
        this.addStep(lastStep);
        continue;
      }
      if (lastStep) this.view = applyEvent(this.view, lastStep);
      lastStep = undefined;
      this.view = applyEvent(this.view, e);
      if (!isKnownEvent(e)) continue;
      switch (e.type) {
        case 'run_started':
          this.started(e);
          break;
        case 'eval':
          this.addEval(e);
          break;
        case 'device': {
          const row = this.devices.steps.length;
          this.devices.steps.push(this.steps.length ? this.steps.step.data[this.steps.length - 1] : 0);
          this.devices.t.push(e.t);
          for (const d of Array.isArray(e.devices) ? e.devices : []) {
            const id = String(d.id);
            let cols = this.devices.byId.get(id);
            if (!cols) {
              const pad = () => new Array<number | null>(row).fill(null);
              cols = { util: pad(), hbmUsedMb: pad(), hbmTotalMb: pad(), tempC: pad(), powerW: pad() };
              this.devices.byId.set(id, cols);
            }
            cols.util.push(orNull(num(d.util)));
            cols.hbmUsedMb.push(orNull(num(d.hbm_used_mb)));
            cols.hbmTotalMb.push(orNull(num(d.hbm_total_mb)));
            cols.tempC.push(orNull(num(d.temp_c)));
            cols.powerW.push(orNull(num(d.power_w)));
          }
          // devices missing from this sample get a gap, so every column keeps the row count
          for (const cols of this.devices.byId.values())
            for (const c of Object.values(cols)) if (c.length === row) c.push(null);
          break;
        }
        case 'host':
          this.addHost(e);
          break;
        case 'checkpoint':
          this.checkpoint(e);
          break;
        case 'unfreeze':
        case 'lr_reduced':
          this.addMark(markOf(e));
          break;
        case 'warning':
          this.notices.push({ seq: e.seq, t: e.t, level: 'warning', code: String(e.code), message: String(e.message) });
          break;
        case 'run_finished':
          this.finished = e;
          if (e.best?.file) this.bestCheckpoint = { file: e.best.file, valAcc: orNull(num(e.best.metrics?.val_acc)) };
          if (e.error)
            this.notices.push({
              seq: e.seq,
              t: e.t,
              level: 'error',
              code: String(e.error.kind),
              message: String(e.error.message),
            });
          break;
      }
    }
    if (lastStep) this.view = applyEvent(this.view, lastStep);
    return n;
  }

  /** Seconds left at the pace of the last ETA_STEPS steps (their step_ms, data wait included). */
  etaSeconds(): number | undefined {
    const s = this.steps;
    const total = this.view.totalSteps;
    if (!s.length || total === undefined) return undefined;
    let sum = 0;
    let k = 0;
    for (let i = s.length - 1; i >= 0 && k < ETA_STEPS; i--) {
      const ms = s.stepMs.data[i];
      if (Number.isNaN(ms)) continue;
      sum += ms;
      k++;
    }
    if (k === 0) return undefined;
    return Math.max(0, (total - s.step.data[s.length - 1]) * (sum / k / 1000));
  }

  /** What the transport saw (a dropped stream, a lost process). */
  signal(s: TransportSignal): void {
    this.view = applySignal(this.view, s);
  }

  private addStep(e: StepEvent): void {
    const s = this.steps;
    const step = num(e.step);
    if (Number.isNaN(step)) return; // a step without its number has no place on the axis
    // A resume from an older checkpoint replays steps already seen: the new segment replaces them,
    // so the step axis stays ascending.
    if (s.length && step <= s.step.data[s.length - 1]) this.rewindTo(step);
    s.step.push(step);
    // A sink's row stands for its steps: its loss is their mean (the last step's is one of N).
    const first = num(e.first_step);
    const sink = first < step;
    s.firstStep.push(sink ? first : NaN);
    s.loss.push(num(sink ? e.mean_loss : e.loss));
    s.lr.push(num(e.lr));
    s.lossScale.push(num(e.loss_scale));
    s.imgPerS.push(num(e.img_per_s));
    s.stepMs.push(num(e.step_ms));
    s.dataMs.push(num(e.data_ms));
    s.trainAcc.push(num(e.train_acc));
    s.t.push(num(e.t));
    // A sink's counts cover all its steps (its flags are its last step's); an older sink event has
    // only the flags, counted once as before.
    const overflows = stepOverflows(e);
    const skipped = stepSkippedUpdates(e);
    s.overflow.push(overflows);
    s.skipped.push(skipped);
    this.overflowsTotal += overflows;
    this.skippedTotal += skipped;
    if (!overflows && (sink ? e.mean_loss : e.loss) === null) this.nanWithoutOverflow++;
  }

  private rewindTo(step: number): void {
    const s = this.steps;
    let keep = s.length;
    while (keep > 0 && s.step.data[keep - 1] >= step) keep--;
    for (let i = keep; i < s.length; i++) {
      this.overflowsTotal -= s.overflow.data[i];
      this.skippedTotal -= s.skipped.data[i];
      if (!s.overflow.data[i] && Number.isNaN(s.loss.data[i])) this.nanWithoutOverflow--;
    }
    for (const c of s.all()) c.truncate(keep);
    if (this.segmentStartRow > keep) this.segmentStartRow = keep;
    this.rewinds++;
  }

  private started(e: RunStartedEvent): void {
    const spec = (e.spec ?? {}) as {
      model?: { backbone?: unknown };
      amp?: { level?: unknown; loss_scale?: unknown; init_scale?: unknown };
    };
    this.start = {
      runId: String(e.run_id),
      backbone: typeof spec.model?.backbone === 'string' ? spec.model.backbone : undefined,
      ampLevel: e.amp?.level ?? (typeof spec.amp?.level === 'string' ? spec.amp.level : undefined),
      lossScaleMode: e.amp?.loss_scale ?? (typeof spec.amp?.loss_scale === 'string' ? spec.amp.loss_scale : undefined),
      initScale: typeof spec.amp?.init_scale === 'number' ? spec.amp.init_scale : undefined,
      globalBatch: typeof e.global_batch === 'number' ? e.global_batch : undefined,
      stepsPerEpoch: typeof e.steps_per_epoch === 'number' && e.steps_per_epoch > 0 ? e.steps_per_epoch : undefined,
      classes: Array.isArray(e.classes) ? e.classes.map(String) : [],
      firstStartedAt: this.start?.firstStartedAt ?? e.t,
      event: e,
    };
    this.configCache = undefined;
    this.configRevision++;
    this.finished = undefined;
    this.segmentStartRow = this.steps.length;
  }

  /** The owner read the run's spec.json (bounded, a regular file): the config panel shows it. */
  setSpecFile(spec: Record<string, unknown>): void {
    this.specFile = spec;
    this.configCache = undefined;
    this.configRevision++;
  }

  /** The resolved spec: spec.json's, else run_started's (undefined before either). */
  spec(): Record<string, unknown> | undefined {
    const e = this.start?.event.spec;
    return this.specFile ?? (typeof e === 'object' && e !== null && !Array.isArray(e) ? e : undefined);
  }

  /** The config panel's contents (null before run_started or spec.json). */
  config(): RunConfig | null {
    if (this.configCache === undefined) this.configCache = runConfig(this.start?.event, this.specFile);
    return this.configCache;
  }

  private addHost(e: HostEvent): void {
    const h = this.host;
    h.steps.push(this.steps.length ? this.steps.step.data[this.steps.length - 1] : 0);
    h.t.push(e.t);
    h.cpuPct.push(orNull(num(e.cpu_pct)));
    h.procCpuPct.push(orNull(num(e.proc_cpu_pct)));
    h.memUsedMb.push(orNull(num(e.mem_used_mb)));
    h.memTotalMb.push(orNull(num(e.mem_total_mb)));
    h.rssMb.push(orNull(num(e.rss_mb)));
  }

  hostBlock(from = 0): HostBlock {
    const h = this.host;
    return {
      steps: h.steps.slice(from),
      t: h.t.slice(from),
      cpuPct: h.cpuPct.slice(from),
      procCpuPct: h.procCpuPct.slice(from),
      memUsedMb: h.memUsedMb.slice(from),
      memTotalMb: h.memTotalMb.slice(from),
      rssMb: h.rssMb.slice(from),
    };
  }

  private addEval(e: EvalEvent): void {
    const ev = this.evals;
    const step = num(e.step);
    // a resumed segment re-evaluates from its checkpoint on: drop the later rows it replaces
    while (ev.steps.length && ev.steps[ev.steps.length - 1] >= step) {
      ev.steps.pop();
      ev.epochs.pop();
      ev.valLoss.pop();
      ev.valAcc.pop();
      ev.valTop5.pop();
      ev.valAccEma.pop();
      ev.perClassAcc.pop();
    }
    ev.steps.push(step);
    ev.epochs.push(num(e.epoch));
    ev.valLoss.push(orNull(num(e.val_loss)));
    ev.valAcc.push(orNull(num(e.val_acc)));
    ev.valTop5.push(orNull(num(e.val_top5)));
    ev.valAccEma.push(orNull(num(e.ema?.val_acc)));
    ev.perClassAcc.push(Array.isArray(e.per_class_acc) ? e.per_class_acc.map((a) => orNull(num(a))) : []);
  }

  /**
   * A resumed segment replays its events from the checkpoint on: marks after the step are dropped
   * and the same mark again (an unfreeze at the resumed epoch's start) is not drawn twice. Several
   * marks may share a step (a plateau's lr_reduced and the next epoch's unfreeze).
   */
  private addMark(m: RunMark | undefined): void {
    if (!m) return;
    while (this.marks.length && this.marks[this.marks.length - 1].step > m.step) {
      this.marks.pop();
      this.rewinds++; // marks already sent changed: a snapshot is due
    }
    if (this.marks.some((k) => k.step === m.step && k.kind === m.kind)) return;
    this.marks.push(m);
  }

  private checkpoint(e: CheckpointEvent): void {
    if (e.best) this.bestCheckpoint = { file: String(e.file), valAcc: orNull(num(e.metrics?.val_acc)) };
  }

  /** The header; `words` word the verdict's reasons (runs/runnerCodes.ts) in the UI's language. */
  header(words: Wording = ENGLISH_WORDING): DashboardHeader {
    const v = this.view;
    const st = this.start;
    const f = this.finished;
    const eta = v.phase === 'running' ? this.etaSeconds() : undefined;
    return {
      key: this.key,
      name: this.meta.name,
      notes: this.meta.notes ?? '',
      tags: this.meta.tags ?? [],
      phase: v.phase,
      status: v.status,
      target: this.meta.target,
      backbone: st?.backbone,
      ampLevel: st?.ampLevel,
      lossScaleMode: st?.lossScaleMode,
      epoch: v.epoch,
      totalEpochs: v.totalEpochs,
      step: v.step,
      totalSteps: v.totalSteps,
      startedAt: st?.firstStartedAt ?? v.startedAt,
      lastEventAt: v.lastEventAt,
      etaS: eta === undefined ? null : eta,
      bestValAcc: v.bestValAcc ?? null,
      bestCheckpoint: this.bestCheckpoint?.file ?? null,
      globalBatch: st?.globalBatch,
      stepsPerEpoch: st?.stepsPerEpoch,
      classes: st?.classes ?? [],
      ampSummary: ampScaling(st?.ampLevel, st?.lossScaleMode).summary,
      health: dashboardHealth(runHealth(f?.health), words),
      error: f?.error ? finishError(f.error, words) : null,
    };
  }

  /** The step rows at `rows` (ascending indices), as the wire block. */
  stepBlock(rows: ArrayLike<number>): StepBlock {
    const s = this.steps;
    const n = rows.length;
    const b: StepBlock = {
      steps: new Array(n),
      loss: new Array(n),
      lr: new Array(n),
      lossScale: new Array(n),
      overflow: new Array(n),
      imgPerS: new Array(n),
      stepMs: new Array(n),
      dataMs: new Array(n),
      trainAcc: new Array(n),
      t: new Array(n),
    };
    for (let i = 0; i < n; i++) {
      const r = rows[i];
      b.steps[i] = s.step.data[r];
      b.loss[i] = orNull(s.loss.data[r]);
      b.lr[i] = orNull(s.lr.data[r]);
      b.lossScale[i] = orNull(s.lossScale.data[r]);
      b.overflow[i] = s.overflow.data[r];
      b.imgPerS[i] = orNull(s.imgPerS.data[r]);
      b.stepMs[i] = orNull(s.stepMs.data[r]);
      b.dataMs[i] = orNull(s.dataMs.data[r]);
      b.trainAcc![i] = orNull(s.trainAcc.data[r]);
      b.t![i] = s.t.data[r];
    }
    // Only a run in sink mode pays for the column on the wire.
    let sinks = false;
    for (let i = 0; i < n && !sinks; i++) sinks = !Number.isNaN(s.firstStep.data[rows[i]]);
    if (sinks) b.firstStep = Array.from(rows, (r) => orNull(s.firstStep.data[r]));
    return b;
  }

  /** Step rows [from, to) as a block (the raw rows of an append). */
  stepRange(from: number, to: number): StepBlock {
    const rows = new Array<number>(Math.max(0, to - from));
    for (let i = 0; i < rows.length; i++) rows[i] = from + i;
    return this.stepBlock(rows);
  }

  evalBlock(from = 0): EvalBlock {
    const ev = this.evals;
    return {
      steps: ev.steps.slice(from),
      epochs: ev.epochs.slice(from),
      valLoss: ev.valLoss.slice(from),
      valAcc: ev.valAcc.slice(from),
      valTop5: ev.valTop5.slice(from),
      valAccEma: ev.valAccEma.slice(from),
      perClassAcc: ev.perClassAcc.slice(from).map((r) => r.slice()),
    };
  }

  deviceBlock(from = 0): DeviceBlock {
    const d = this.devices;
    const devices: DeviceBlock['devices'] = {};
    for (const [id, c] of d.byId) {
      devices[id] = {
        util: c.util.slice(from),
        hbmUsedMb: c.hbmUsedMb.slice(from),
        hbmTotalMb: c.hbmTotalMb.slice(from),
        tempC: c.tempC.slice(from),
        powerW: c.powerW.slice(from),
      };
    }
    return { steps: d.steps.slice(from), t: d.t.slice(from), devices };
  }
}

/** An unfreeze or lr_reduced event as a chart mark; undefined without a step to put it at. */
export function markOf(e: UnfreezeEvent | LrReducedEvent): RunMark | undefined {
  const step = num(e.step);
  if (Number.isNaN(step)) return undefined;
  if (e.type === 'unfreeze') {
    const parts = Array.isArray(e.unfrozen) ? e.unfrozen.map(String) : [];
    const what = parts.length ? parts.join('+') : String(e.freeze);
    return { step, kind: 'unfreeze', label: `unfreeze ${what}`, args: [what] };
  }
  const fmt = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? Number(v.toPrecision(3)).toString() : '?');
  const [from, to] = [fmt(e.previous_lr), fmt(e.lr)];
  return { step, kind: 'lr_reduced', label: `lr ${from}→${to}`, args: [from, to] };
}

/**
 * The verdict as the header carries it: code, message and fix of each reason (no parameters), the
 * message and fix worded from the parameters in the UI's language when the code is known.
 */
export function dashboardHealth(h: RunHealth | undefined, words: Wording = ENGLISH_WORDING): DashboardHeader['health'] {
  if (!h) return null;
  return { verdict: h.verdict, reasons: h.reasons.map((r) => ({ code: r.code, ...reasonText(r, words) })) };
}

/** The banner's error: its message and fix worded from its code (runnerErrors.ts), else the runner's English. */
function finishError(e: RunError, words: Wording): NonNullable<DashboardHeader['error']> {
  const worded = runnerErrorText(e, words);
  return {
    kind: String(e.kind),
    message: worded?.message ?? String(e.message),
    traceTail: e.trace_tail ?? null,
    ...(typeof e.path === 'string' ? { path: e.path } : {}),
    ...(worded?.fix ? { fix: worded.fix } : {}),
  };
}
