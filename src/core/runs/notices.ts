// What to tell the user about a run's events, decided without vscode: which event makes a
// notification, its severity, its words and its actions (labels the glue maps to commands). The
// glue (src/vscode/runMonitor.ts) only shows what these return.
import { isKnownEvent, type RunEvent, type RunFinishedEvent, type WarningEvent } from '../../shared/eventsProtocol';

export type NoticeAction = 'Open Dashboard' | 'Show Checkpoints' | 'Show Console' | 'Reattach';

export interface Notice {
  severity: 'info' | 'warning' | 'error';
  message: string;
  actions: NoticeAction[];
}

/** The notification for a run's end. */
export function finishNotice(name: string, e: RunFinishedEvent): Notice {
  const best =
    e.best?.metrics && typeof e.best.metrics.val_acc === 'number'
      ? `, best val_acc ${(e.best.metrics.val_acc * 100).toFixed(1)}%`
      : '';
  if (e.status === 'completed') {
    return {
      severity: 'info',
      message: `Ascend run "${name}" completed${best}.`,
      actions: ['Open Dashboard', 'Show Checkpoints'],
    };
  }
  if (e.status === 'stopped') {
    return { severity: 'info', message: `Ascend run "${name}" stopped${best}.`, actions: ['Show Checkpoints'] };
  }
  const err = e.error;
  let why = err ? `${err.kind}: ${err.message}` : 'no error reported';
  if (err?.fix) why += ` (fix: ${err.fix})`;
  return { severity: 'error', message: `Ascend run "${name}" failed: ${why}`, actions: ['Show Console'] };
}

/** A lost run: the process died without finishing. */
export function lostNotice(name: string): Notice {
  return {
    severity: 'error',
    message: `Ascend run "${name}" was lost: its training process is gone without finishing.`,
    actions: ['Show Console'],
  };
}

/** The stream stopped for another reason than a lost run (the run itself may go on): offer to re-attach. */
export function streamStoppedNotice(name: string, reason: string): Notice {
  return { severity: 'warning', message: `Stopped following Ascend run "${name}": ${reason}`, actions: ['Reattach'] };
}

/** Runner warnings worth a notification: every one, with its code (unknown codes as they are). */
export function warningNotice(name: string, e: WarningEvent): Notice {
  return { severity: 'warning', message: `Ascend run "${name}": ${e.message} [${e.code}]`, actions: [] };
}

/** A step whose loss is NaN or Inf (the runner skipped its update). */
export function nanLossNotice(name: string, step: number): Notice {
  return {
    severity: 'warning',
    message: `Ascend run "${name}": the loss is NaN or Inf at step ${step}; the update was skipped.`,
    actions: ['Show Console'],
  };
}

/** A streak of OVERFLOW_STORM_STEPS loss-scale overflows, ending at `step`. */
export function overflowStormNotice(name: string, step: number): Notice {
  return {
    severity: 'warning',
    message: `Ascend run "${name}": ${OVERFLOW_STORM_STEPS} loss-scale overflows in a row (step ${step}); fp16 may not hold these gradients (try amp.level O0 or a lower learning rate).`,
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

  /** True exactly when this step makes the streak reach the threshold. */
  step(overflow: boolean): boolean {
    if (!overflow) {
      this.run = 0;
      this.warned = false;
      return false;
    }
    this.run++;
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
  private nanWarned = false;

  constructor(private readonly name: string) {}

  /** What to show for this event, in order (none, one or two notices). */
  event(event: RunEvent, notifyWarnings: boolean): Notice[] {
    if (!isKnownEvent(event)) return [];
    switch (event.type) {
      case 'run_finished':
        return [finishNotice(this.name, event)];
      case 'warning':
        return notifyWarnings ? [warningNotice(this.name, event)] : [];
      case 'step': {
        const out: Notice[] = [];
        if (event.loss === null && !this.nanWarned) {
          this.nanWarned = true;
          out.push(nanLossNotice(this.name, event.step));
        }
        // The streak counts whatever the setting: one that peaked while it was off is not reported later.
        if (this.storm.step(event.overflow) && notifyWarnings) out.push(overflowStormNotice(this.name, event.step));
        return out;
      }
      default:
        return [];
    }
  }
}
