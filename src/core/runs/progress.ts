import type {
  CheckpointEvent,
  EvalEvent,
  Metrics,
  RunEvent,
  RunFinishedEvent,
  StepEvent,
  WarningEvent,
} from '../../shared/eventsProtocol';
import { isEarlyStop, isKnownEvent, runHealth, stepOverflows } from '../../shared/eventsProtocol';
import { english } from '../l10n';
import { ENGLISH_WORDING, reasonText, warningText, type Wording } from './runnerCodes';
import { runnerErrorText } from './runnerErrors';

// The console's lines (the task terminal; the CLI keeps English). Words go through `words.t`;
// metric keys (val_acc), file names and numbers stay as written.

/**
 * Folds a run's events into what a one-line progress text needs: totals from `run_started`,
 * the latest step, and the current epoch's running loss average and overflow count.
 */
export class ProgressTracker {
  totalEpochs: number | undefined;
  totalSteps: number | undefined;
  startedAt: number | undefined;
  lastStep: StepEvent | undefined;
  /** Skipped (overflow) steps over the whole run. */
  overflowTotal = 0;
  private epoch = 0;
  private lossSum = 0;
  private lossCount = 0;
  private epochOverflows = 0;

  apply(event: RunEvent): void {
    if (!isKnownEvent(event)) return;
    switch (event.type) {
      case 'run_started':
        this.startedAt = event.t;
        this.totalSteps = event.total_steps;
        this.totalEpochs = event.steps_per_epoch > 0 ? Math.ceil(event.total_steps / event.steps_per_epoch) : undefined;
        break;
      case 'step':
        if (event.epoch !== this.epoch) {
          this.epoch = event.epoch;
          this.lossSum = this.lossCount = this.epochOverflows = 0;
        }
        this.lastStep = event;
        if (typeof event.loss === 'number' && Number.isFinite(event.loss)) {
          this.lossSum += event.loss;
          this.lossCount++;
        }
        {
          const overflows = stepOverflows(event); // a sink's: all its steps
          this.epochOverflows += overflows;
          this.overflowTotal += overflows;
        }
        break;
    }
  }

  /** e.g. `epoch 1/2 step 12/40 loss 0.6931 (avg 0.70) overflow 3 lr 0.01 scale 65536 412 img/s` */
  line(t = english): string {
    const s = this.lastStep;
    if (!s) return t('waiting for the first step');
    const parts = [
      this.totalEpochs ? t('epoch {0}/{1}', s.epoch, this.totalEpochs) : t('epoch {0}', s.epoch),
      this.totalSteps ? t('step {0}/{1}', s.step, this.totalSteps) : t('step {0}', s.step),
      this.lossCount
        ? t('loss {0} (avg {1})', fixed(s.loss, 4), fixed(this.lossSum / this.lossCount, 2))
        : t('loss {0}', fixed(s.loss, 4)),
    ];
    if (this.epochOverflows) parts.push(t('overflow {0}', this.epochOverflows));
    parts.push(t('lr {0}', short(s.lr)));
    if (s.loss_scale !== null && s.loss_scale !== undefined) parts.push(t('scale {0}', short(s.loss_scale)));
    if (typeof s.img_per_s === 'number') parts.push(t('{0} img/s', Math.round(s.img_per_s)));
    return parts.join(' ');
  }
}

/** e.g. `eval epoch 1: val_acc 0.875 val_loss 0.31` */
export function formatEval(e: EvalEvent, t = english): string {
  return t('eval epoch {0}: val_acc {1} val_loss {2}', e.epoch, fixed(e.val_acc, 3), fixed(e.val_loss, 2));
}

/** e.g. `checkpoint epoch 1 step 20: resnet18-1_20.ckpt 43.7 MB val_acc 0.875 (best)` */
export function formatCheckpoint(e: CheckpointEvent, t = english): string {
  const metrics = formatMetrics(e.metrics);
  const what = `${baseName(e.file)} ${t('{0} MB', (e.bytes / 1e6).toFixed(1))}${metrics ? ` ${metrics}` : ''}`;
  return e.best
    ? t('checkpoint epoch {0} step {1}: {2} (best)', e.epoch, e.step, what)
    : t('checkpoint epoch {0} step {1}: {2}', e.epoch, e.step, what);
}

/** A runner warning: its code as written, its message worded from the code when known. */
export function formatWarning(e: WarningEvent, words: Wording = ENGLISH_WORDING): string {
  return words.t('warning {0}: {1}', e.code, warningText(e, words));
}

/**
 * The last lines of a run: how it ended (`completed with problems` when its verdict says so), how
 * long it took, the final and best metrics, and each problem with its fix.
 */
export function formatSummary(
  e: RunFinishedEvent,
  tracker?: ProgressTracker,
  words: Wording = ENGLISH_WORDING,
): string {
  const t = words.t;
  const health = runHealth(e.health);
  const problems = e.status !== 'failed' && health?.verdict === 'problems';
  const how = problems ? t('{0} with problems', statusWord(e.status, t)) : statusWord(e.status, t);
  const lines = [
    tracker?.startedAt !== undefined
      ? t('run {0} in {1}', how, duration(e.t - tracker.startedAt, t))
      : t('run {0}', how),
  ];
  if (tracker?.lastStep) {
    lines.push(`  ${t('{0} steps, {1} skipped for overflow', tracker.lastStep.step, tracker.overflowTotal)}`);
  }
  const final = formatMetrics(e.final);
  if (final) lines.push(`  ${t('final: {0}', final)}`);
  if (e.best) {
    const metrics = formatMetrics(e.best.metrics);
    const file = baseName(e.best.file);
    lines.push(
      `  ${
        metrics
          ? t('best: {0} (epoch {1} step {2}, {3})', file, e.best.epoch, e.best.step, metrics)
          : t('best: {0} (epoch {1} step {2})', file, e.best.epoch, e.best.step)
      }`,
    );
  }
  if (isEarlyStop(e.early_stop))
    lines.push(`  ${t('stopped early after epoch {0}: {1}', e.early_stop.epoch, e.early_stop.message)}`);
  // The error's kind is a code; its message worded from its code (runnerErrors.ts), else the runner's English.
  if (e.error) {
    const worded = runnerErrorText(e.error, words);
    lines.push(`  ${t('error: {0}: {1}', e.error.kind, worded?.message ?? e.error.message)}`);
    if (worded?.fix) lines.push(`    ${t('fix: {0}', worded.fix)}`);
  }
  if (problems) {
    for (const r of health.reasons) {
      const worded = reasonText(r, words);
      lines.push(`  ${t('problem: {0}', worded.message)}`);
      if (worded.fix) lines.push(`    ${t('fix: {0}', worded.fix)}`);
    }
  }
  return lines.join('\n');
}

function statusWord(status: RunFinishedEvent['status'], t = english): string {
  return status === 'completed'
    ? t('completed')
    : status === 'stopped'
      ? t('stopped')
      : status === 'failed'
        ? t('failed')
        : String(status);
}

export function formatMetrics(metrics: Metrics | null | undefined): string {
  if (!metrics) return '';
  return Object.entries(metrics)
    .filter((entry): entry is [string, number] => typeof entry[1] === 'number')
    .map(([k, v]) => `${k} ${short(v)}`)
    .join(' ');
}

function fixed(x: number | null | undefined, digits: number): string {
  return typeof x === 'number' && Number.isFinite(x) ? x.toFixed(digits) : 'NaN';
}

/** Four significant digits without trailing zeros: 0.01, 0.0001, 65536, 0.8751. */
function short(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (Number.isInteger(x)) return String(x);
  return String(Number(x.toPrecision(4)));
}

function duration(seconds: number, t = english): string {
  const s = Math.max(0, Math.round(seconds));
  const m = Math.floor(s / 60);
  return m ? t('{0}m {1}s', m, s % 60) : t('{0}s', s);
}

function baseName(file: string): string {
  return file.slice(file.lastIndexOf('/') + 1);
}
