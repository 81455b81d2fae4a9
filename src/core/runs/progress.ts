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
  line(): string {
    const s = this.lastStep;
    if (!s) return 'waiting for the first step';
    const parts = [
      `epoch ${s.epoch}${this.totalEpochs ? `/${this.totalEpochs}` : ''}`,
      `step ${s.step}${this.totalSteps ? `/${this.totalSteps}` : ''}`,
      `loss ${fixed(s.loss, 4)}${this.lossCount ? ` (avg ${fixed(this.lossSum / this.lossCount, 2)})` : ''}`,
    ];
    if (this.epochOverflows) parts.push(`overflow ${this.epochOverflows}`);
    parts.push(`lr ${short(s.lr)}`);
    if (s.loss_scale !== null && s.loss_scale !== undefined) parts.push(`scale ${short(s.loss_scale)}`);
    if (typeof s.img_per_s === 'number') parts.push(`${Math.round(s.img_per_s)} img/s`);
    return parts.join(' ');
  }
}

/** e.g. `eval epoch 1: val_acc 0.875 val_loss 0.31` */
export function formatEval(e: EvalEvent): string {
  return `eval epoch ${e.epoch}: val_acc ${fixed(e.val_acc, 3)} val_loss ${fixed(e.val_loss, 2)}`;
}

/** e.g. `checkpoint epoch 1 step 20: resnet18-1_20.ckpt 43.7 MB val_acc 0.875 (best)` */
export function formatCheckpoint(e: CheckpointEvent): string {
  const metrics = formatMetrics(e.metrics);
  return `checkpoint epoch ${e.epoch} step ${e.step}: ${baseName(e.file)} ${megabytes(e.bytes)}${metrics ? ` ${metrics}` : ''}${e.best ? ' (best)' : ''}`;
}

export function formatWarning(e: WarningEvent): string {
  return `warning ${e.code}: ${e.message}`;
}

/**
 * The last lines of a run: how it ended (`completed with problems` when its verdict says so), how
 * long it took, the final and best metrics, and each problem with its fix.
 */
export function formatSummary(e: RunFinishedEvent, tracker?: ProgressTracker): string {
  const took = tracker?.startedAt !== undefined ? ` in ${duration(e.t - tracker.startedAt)}` : '';
  const health = runHealth(e.health);
  const problems = e.status !== 'failed' && health?.verdict === 'problems';
  const lines = [`run ${e.status}${problems ? ' with problems' : ''}${took}`];
  if (tracker?.lastStep) {
    lines.push(`  ${tracker.lastStep.step} steps, ${tracker.overflowTotal} skipped for overflow`);
  }
  const final = formatMetrics(e.final);
  if (final) lines.push(`  final: ${final}`);
  if (e.best) {
    const metrics = formatMetrics(e.best.metrics);
    lines.push(
      `  best: ${baseName(e.best.file)} (epoch ${e.best.epoch} step ${e.best.step}${metrics ? `, ${metrics}` : ''})`,
    );
  }
  if (isEarlyStop(e.early_stop))
    lines.push(`  stopped early after epoch ${e.early_stop.epoch}: ${e.early_stop.message}`);
  if (e.error) lines.push(`  error: ${e.error.kind}: ${e.error.message}`);
  if (problems) {
    for (const r of health.reasons) {
      lines.push(`  problem: ${r.message}`);
      if (r.fix) lines.push(`    fix: ${r.fix}`);
    }
  }
  return lines.join('\n');
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

function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const m = Math.floor(s / 60);
  return m ? `${m}m ${s % 60}s` : `${s}s`;
}

function baseName(file: string): string {
  return file.slice(file.lastIndexOf('/') + 1);
}
