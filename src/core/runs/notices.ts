// What to tell the user about a run's events, decided without vscode: which event makes a
// notification, its severity, its words and its actions (labels the glue maps to commands). The
// glue (src/vscode/runMonitor.ts) only shows what these return. Sentences go through `t` (the
// glue passes vscode.l10n.t; English by default); action ids stay English, the glue labels them.
import {
  isEarlyStop,
  isKnownEvent,
  runHealth,
  stepOverflows,
  stepsCovered,
  type RunEvent,
  type RunFinishedEvent,
  type WarningEvent,
} from '../../shared/eventsProtocol';
import { english, type Translate } from '../l10n';
import { problemLines } from '../spec/builder';
import type { ProblemWording } from '../spec/problemWords';
import { reasonText, warningText } from './runnerCodes';
import { wordedRunnerError } from './runnerErrors';

export type NoticeAction = 'Open Dashboard' | 'Show Checkpoints' | 'Show Console' | 'Reattach' | 'Show All';

export interface Notice {
  severity: 'info' | 'warning' | 'error';
  message: string;
  actions: NoticeAction[];
  /** What "Show All" lists: every item of the notice, one per entry, most serious first. */
  details?: string[];
  /**
   * A failed run's spec problems as the runner sent them (English): the glue words them again
   * against the run's spec.json, which only the target holds (specProblemDetails).
   */
  problems?: readonly SpecProblemSent[];
}

/** A problem of `bad_spec`'s `problems`: `{path, message, fix}`, English (docs/protocol.md). */
export interface SpecProblemSent {
  path: string;
  message: string;
  fix: string;
}

/**
 * The lines "Show All" lists for a spec that did not validate. With a wording (a display language
 * other than English), each problem is worded by kind as the local checker words it: the checker's
 * own problem on `spec` (the run's spec.json) with the same path and English, or a path missing on
 * the target; a problem neither knows keeps the runner's English. Without one, the runner's words.
 */
export function specProblemDetails(
  problems: readonly SpecProblemSent[],
  t: Translate = english,
  opts: { wording?: ProblemWording; spec?: unknown } = {},
): string[] {
  if (opts.wording) return problemLines({ problems }, opts);
  return problems.map((p) => `${p.path}: ${p.message}${p.fix ? t(' (fix: {0})', p.fix) : ''}`);
}

/**
 * A sentence for the user, with its fix: the error worded from its code (runnerErrors.ts), or, from
 * a runner without codes, for the kinds that name something the user can act on (docs/protocol.md,
 * section 1 and `run_finished`); undefined otherwise.
 */
export function runnerErrorSentence(
  err: { kind?: unknown; code?: unknown; params?: unknown; message?: unknown; path?: unknown; fix?: unknown },
  t: Translate = english,
  language?: string,
): string | undefined {
  const worded = wordedRunnerError(err, { t, language }); // a runner with codes (runnerErrors.ts)
  if (worded) return worded.fix ? t('{0} (fix: {1})', worded.message, worded.fix) : worded.message;
  const msg = typeof err.message === 'string' ? err.message : '';
  switch (err.kind) {
    case 'unsafe_file':
      return t(
        'A file in the run directory is not safe to use ({0}). Someone else may have planted it: check who owns the run directory, remove the link or special file, and try again.',
        msg || (typeof err.path === 'string' ? err.path : t('a symlink or special file')),
      );
    case 'disk_full':
      return msg
        ? t(
            'The disk holding the run is full ({0}). Free some space on the target, then resume the run from its last checkpoint.',
            msg,
          )
        : t(
            'The disk holding the run is full. Free some space on the target, then resume the run from its last checkpoint.',
          );
    case 'bad_run':
      return msg
        ? t(
            'This run directory cannot be used: {0}. Its status.json or events.jsonl is not a regular file or is damaged; the other runs are not affected. Delete the run, or restore its files.',
            msg,
          )
        : t(
            'This run directory cannot be used. Its status.json or events.jsonl is not a regular file or is damaged; the other runs are not affected. Delete the run, or restore its files.',
          );
    default:
      return undefined;
  }
}

/** The notification for a run's end: green words only for a healthy run. */
export function finishNotice(name: string, e: RunFinishedEvent, t: Translate = english, language?: string): Notice {
  const best =
    e.best?.metrics && typeof e.best.metrics.val_acc === 'number'
      ? t(', best val_acc {0}%', (e.best.metrics.val_acc * 100).toFixed(1))
      : '';
  const health = runHealth(e.health);
  if (e.status !== 'failed' && health?.verdict === 'problems') {
    const reasons = health.reasons.map((r) => reasonText(r, { t, language }));
    const [first, ...rest] = reasons;
    const why = first ? (first.fix ? t(': {0} — {1}', first.message, first.fix) : t(': {0}', first.message)) : '';
    const more = rest.length ? t(' (+{0} more)', rest.length) : '';
    return {
      severity: 'warning',
      message:
        e.status === 'stopped'
          ? t('Ascend run "{0}" stopped with problems{1}{2}', name, why, more)
          : t('Ascend run "{0}" completed with problems{1}{2}', name, why, more),
      actions: rest.length ? ['Show All', 'Open Dashboard'] : ['Open Dashboard'],
      details: reasons.map((r) => (r.fix ? t('{0} Fix: {1}', r.message, r.fix) : r.message)),
    };
  }
  if (e.status === 'completed') {
    const early = isEarlyStop(e.early_stop) ? t(' early ({0})', e.early_stop.message) : '';
    return {
      severity: 'info',
      message: t('Ascend run "{0}" completed{1}{2}.', name, early, best),
      actions: ['Open Dashboard', 'Show Checkpoints'],
    };
  }
  if (e.status === 'stopped') {
    return { severity: 'info', message: t('Ascend run "{0}" stopped{1}.', name, best), actions: ['Show Checkpoints'] };
  }
  const err = e.error;
  let why: string;
  const worded = err ? wordedRunnerError(err, { t, language }) : undefined;
  if (worded) why = worded.fix ? t('{0} (fix: {1})', worded.message, worded.fix) : worded.message;
  else {
    why = err ? (runnerErrorSentence(err, t) ?? `${err.kind}: ${err.message}`) : t('no error reported');
    if (err?.fix) why += t(' (fix: {0})', err.fix);
  }
  const notice: Notice = {
    severity: 'error',
    message: t('Ascend run "{0}" failed: {1}', name, why),
    actions: ['Show Console'],
  };
  // A spec that did not validate: its problems (the runner's words) are the details "Show All" lists.
  const problems = Array.isArray(err?.problems) ? err.problems : [];
  if (problems.length) {
    notice.actions = ['Show All', 'Show Console'];
    notice.details = specProblemDetails(problems, t);
    notice.problems = problems;
  }
  return notice;
}

/** A lost run: the process died without finishing. */
export function lostNotice(name: string, t: Translate = english): Notice {
  return {
    severity: 'error',
    message: t('Ascend run "{0}" was lost: its training process is gone without finishing.', name),
    actions: ['Show Console'],
  };
}

/** The stream stopped for another reason than a lost run (the run itself may go on): offer to re-attach. */
export function streamStoppedNotice(name: string, reason: string, t: Translate = english): Notice {
  return {
    severity: 'warning',
    message: t('Stopped following Ascend run "{0}": {1}', name, reason),
    actions: ['Reattach'],
  };
}

/**
 * Runner warnings worth a notification: every one, with its code, worded in the user's language
 * when the code is known (runnerCodes.ts), else the runner's English.
 */
export function warningNotice(name: string, e: WarningEvent, t: Translate = english, language?: string): Notice {
  const text = warningText(e, { t, language });
  return { severity: 'warning', message: t('Ascend run "{0}": {1} [{2}]', name, text, e.code), actions: [] };
}

/**
 * How serious a warning code is, lower first: what makes the run learn nothing or fail, then what
 * makes it wrong or slow on the device, then notes about a default that was adjusted. Unknown
 * codes (a newer runner) sit in the middle, above the notes.
 */
const WARNING_RANK: Readonly<Record<string, number>> = {
  frozen_random_backbone: 0,
  nonfinite_loss: 0,
  overflow_storm: 0,
  pretrained_partial: 1,
  ascend_unavailable: 1,
  cann_mismatch: 1,
  npu_busy: 1,
  images_skipped: 2,
  npu_low_hbm: 2,
  feature_cache_rejected: 3,
  feature_cache_unsaved: 3,
  telemetry_unavailable: 4,
  workers_above_cores: 4,
  no_checkpoint_interval: 4,
  preprocess_assumed: 4,
  preprocess_config_missing: 4,
  preprocess_config_invalid: 3,
  preprocess_input_size: 4,
  sink_unavailable: 5,
  sink_size_ignored: 5, // older runners' (no longer written)
  sink_size_reduced: 5,
  amp_auto_cpu: 5,
};
const UNKNOWN_RANK = 3;

export function warningRank(code: string): number {
  return WARNING_RANK[code] ?? UNKNOWN_RANK;
}

/** Most serious first; equal ranks keep their order of arrival. */
export function rankWarnings<T extends Pick<WarningEvent, 'code'>>(warnings: readonly T[]): T[] {
  return warnings
    .map((w, i) => ({ w, i }))
    .sort((a, b) => warningRank(a.w.code) - warningRank(b.w.code) || a.i - b.i)
    .map((x) => x.w);
}

/** One notification for warnings that came together: the most serious, "+N more", and Show All. */
export function warningBurstNotice(
  name: string,
  warnings: readonly WarningEvent[],
  t: Translate = english,
  language?: string,
): Notice {
  const ranked = rankWarnings(warnings);
  if (ranked.length === 1) return warningNotice(name, ranked[0], t, language);
  const [top] = ranked;
  const text = (w: WarningEvent) => warningText(w, { t, language });
  return {
    severity: 'warning',
    message: t('Ascend run "{0}": {1} [{2}] (+{3} more)', name, text(top), top.code, ranked.length - 1),
    actions: ['Show All'],
    details: ranked.map((w) => t('[{0}] {1}', w.code, text(w))),
  };
}

/** Seconds within which warnings after the first step still belong to one burst. */
export const BURST_S = 1;

/**
 * Groups warnings that arrive together: every warning before the run's first step (its set-up and
 * pre-flight ones), or within BURST_S of the burst's first warning after that. `add` says whether
 * a warning joined the open burst; a step or the run's end closes it (`take`).
 */
export class WarningBurst {
  private pending: WarningEvent[] = [];
  private stepped = false;

  /** Adds a warning; returns the burst it closed (a later warning that starts a new one), if any. */
  add(w: WarningEvent): WarningEvent[] {
    const first = this.pending[0];
    if (first === undefined || !this.stepped || w.t - first.t < BURST_S) {
      this.pending.push(w);
      return [];
    }
    const closed = this.take();
    this.pending.push(w);
    return closed;
  }

  /** A step: set-up is over, and a burst before it is complete. */
  step(): WarningEvent[] {
    this.stepped = true;
    return this.take();
  }

  get open(): boolean {
    return this.pending.length > 0;
  }

  take(): WarningEvent[] {
    const out = this.pending;
    this.pending = [];
    return out;
  }
}

/** A step whose loss is NaN or Inf (the runner skipped its update). */
export function nanLossNotice(name: string, step: number, t: Translate = english): Notice {
  return {
    severity: 'warning',
    message: t('Ascend run "{0}": the loss is NaN or Inf at step {1}; the update was skipped.', name, step),
    actions: ['Show Console'],
  };
}

/** A streak of OVERFLOW_STORM_STEPS loss-scale overflows, ending at `step`. */
export function overflowStormNotice(name: string, step: number, t: Translate = english): Notice {
  return {
    severity: 'warning',
    message: t(
      'Ascend run "{0}": {1} loss-scale overflows in a row (step {2}); fp16 may not hold these gradients (try amp.level O0 or a lower learning rate).',
      name,
      OVERFLOW_STORM_STEPS,
      step,
    ),
    actions: [],
  };
}

/**
 * Consecutive overflow steps that make an "overflow storm" notice (a dynamic loss scale that
 * keeps halving means fp16 cannot hold the gradients).
 */
export const OVERFLOW_STORM_STEPS = 20;

/** Tracks consecutive overflow steps; says once per storm when to warn. */
export class OverflowStorm {
  private run = 0;
  private warned = false;

  /**
   * True exactly when this step makes the streak reach the threshold. A sink of `size` steps with
   * `overflows` of them overflowed extends the streak when all did; else one that ended on an
   * overflow (`overflow`, its last step's flag) starts a streak of at least 1.
   */
  step(overflow: boolean, overflows = overflow ? 1 : 0, size = 1): boolean {
    if (overflows < size) {
      this.run = 0;
      this.warned = false;
    }
    if (!overflow) return false;
    this.run += overflows < size ? 1 : size;
    if (this.run >= OVERFLOW_STORM_STEPS && !this.warned) {
      this.warned = true;
      return true;
    }
    return false;
  }
}

/**
 * The notices of one followed run, event by event: a finish always; runner warnings and overflow
 * storms only when `ascendFinetune.notifyWarnings` is on; a NaN/Inf loss once per attach. Feed it
 * only the events the user has not been told about (a re-attach replays older ones).
 */
export class RunNotices {
  private readonly storm = new OverflowStorm();
  private readonly burst = new WarningBurst();
  private nanWarned = false;

  constructor(
    private readonly name: string,
    private readonly t: Translate = english,
    /** The display language, for the numbers in the runner's reworded warnings and reasons. */
    private readonly language?: string,
  ) {}

  /** Warnings are held while their burst may still grow: the glue calls `flush` a moment after one. */
  get holding(): boolean {
    return this.burst.open;
  }

  /** The held burst's notice, now (the stream went quiet). */
  flush(notifyWarnings: boolean): Notice[] {
    return this.burstNotice(this.burst.take(), notifyWarnings);
  }

  private burstNotice(warnings: WarningEvent[], notifyWarnings: boolean): Notice[] {
    return notifyWarnings && warnings.length ? [warningBurstNotice(this.name, warnings, this.t, this.language)] : [];
  }

  /** What to show for this event, in order (none, one or more notices). */
  event(event: RunEvent, notifyWarnings: boolean): Notice[] {
    if (!isKnownEvent(event)) return [];
    switch (event.type) {
      case 'run_finished':
        return [...this.flush(notifyWarnings), finishNotice(this.name, event, this.t, this.language)];
      case 'warning':
        return this.burstNotice(this.burst.add(event), notifyWarnings);
      case 'step': {
        const out: Notice[] = this.burstNotice(this.burst.step(), notifyWarnings);
        if (event.loss === null && !this.nanWarned) {
          this.nanWarned = true;
          out.push(nanLossNotice(this.name, event.step, this.t));
        }
        // The streak counts whatever the setting: one that peaked while it was off is not reported later.
        if (this.storm.step(event.overflow, stepOverflows(event), stepsCovered(event)) && notifyWarnings)
          out.push(overflowStormNotice(this.name, event.step, this.t));
        return out;
      }
      default:
        return [];
    }
  }
}
