// One run as the extension shows it: a small state machine fed by the runner's events and by what
// the transport sees (a dropped stream, a dead process). Views, the status bar and notifications
// read `RunView`; nothing here knows about VS Code.
import type { RunEvent, RunFinishedEvent } from '../../shared/eventsProtocol';
import { isKnownEvent, stepOverflows } from '../../shared/eventsProtocol';
import { english, type Translate } from '../l10n';

/**
 * launching: `launch` returned, no run_started yet; running: events flow; reconnecting: the stream
 * dropped and is being re-attached; finished: run_finished arrived (see `status`); lost: the
 * training process is gone without run_finished.
 */
export type RunPhase = 'launching' | 'running' | 'reconnecting' | 'finished' | 'lost';

export interface RunView {
  phase: RunPhase;
  /** How it ended, once finished. */
  status?: RunFinishedEvent['status'];
  error?: RunFinishedEvent['error'];
  lastSeq: number;
  epoch?: number;
  totalEpochs?: number;
  step?: number;
  totalSteps?: number;
  stepsPerEpoch?: number;
  loss?: number | null;
  imgPerS?: number | null;
  lossScale?: number | null;
  overflows: number;
  /** A download during set-up (`setup` events), until `run_started`. */
  download?: { source: string; done: number; total: number | null };
  bestValAcc?: number;
  /** unix seconds of run_started (of the latest segment, after a resume) and of the last event */
  startedAt?: number;
  lastEventAt?: number;
  /** seconds per step, smoothed, for the ETA; `lastStepT` is the previous step's time */
  secPerStep?: number;
  lastStepT?: number;
  warnings: number;
}

export type TransportSignal =
  | { kind: 'dropped' } // the attach stream ended early and will be retried
  | { kind: 'lost' } // the runner says the process is gone (attach's `lost` error, or `ls`)
  | { kind: 'reattached' };

const SMOOTHING = 0.2; // weight of the newest step in the moving average of step time

export function initialView(): RunView {
  return { phase: 'launching', lastSeq: 0, overflows: 0, warnings: 0 };
}

/** The next view after one event; events at or below lastSeq are ignored (never counted twice). */
export function applyEvent(view: RunView, event: RunEvent): RunView {
  if (event.seq <= view.lastSeq) return view;
  const v: RunView = { ...view, lastSeq: event.seq, lastEventAt: event.t };
  if (v.phase === 'reconnecting' || v.phase === 'launching') v.phase = 'running';
  if (!isKnownEvent(event)) return v;
  switch (event.type) {
    case 'setup':
      // Still setting up: the run starts with run_started.
      if (view.phase === 'launching' || view.phase === 'reconnecting') v.phase = 'launching';
      if (event.stage === 'download' && typeof event.source === 'string' && typeof event.done === 'number')
        v.download = { source: event.source, done: event.done, total: num(event.total) ?? null };
      break;
    case 'run_started': {
      // also a resume in the same run directory: the run is live again
      v.phase = 'running';
      v.download = undefined;
      v.status = undefined;
      v.error = undefined;
      v.startedAt = event.t;
      v.lastStepT = undefined; // a resume: the time it was down is not a step
      v.totalSteps = event.total_steps;
      v.stepsPerEpoch = event.steps_per_epoch;
      // isRunEvent already refuses a spec that is not an object; `train` is the runner's own.
      const train = (event.spec as { train?: unknown } | null)?.train as { epochs?: unknown } | null | undefined;
      v.totalEpochs = num(train?.epochs);
      break;
    }
    case 'step': {
      if (v.lastStepT !== undefined && event.t > v.lastStepT) {
        const dt = event.t - v.lastStepT;
        v.secPerStep = v.secPerStep === undefined ? dt : v.secPerStep * (1 - SMOOTHING) + dt * SMOOTHING;
      }
      v.lastStepT = event.t;
      v.epoch = event.epoch;
      v.step = event.step;
      v.loss = event.loss;
      v.imgPerS = event.img_per_s;
      v.lossScale = event.loss_scale;
      v.overflows += stepOverflows(event); // a sink's: all its steps
      break;
    }
    case 'eval':
      if (v.bestValAcc === undefined || event.val_acc > v.bestValAcc) v.bestValAcc = event.val_acc;
      break;
    case 'warning':
      v.warnings++;
      break;
    case 'run_finished':
      v.phase = 'finished';
      v.download = undefined;
      v.status = event.status;
      v.error = event.error;
      break;
  }
  return v;
}

export function applySignal(view: RunView, signal: TransportSignal): RunView {
  if (view.phase === 'finished') return view; // nothing the transport says changes a finished run
  switch (signal.kind) {
    case 'dropped':
      return view.phase === 'lost' ? view : { ...view, phase: 'reconnecting' };
    case 'reattached':
      return view.phase === 'reconnecting' ? { ...view, phase: 'running' } : view;
    case 'lost':
      return { ...view, phase: 'lost' };
  }
}

/** Seconds left at the current pace, or undefined before there is a pace. */
export function etaSeconds(view: RunView): number | undefined {
  if (view.secPerStep === undefined || view.step === undefined || view.totalSteps === undefined) return undefined;
  return Math.max(0, (view.totalSteps - view.step) * view.secPerStep);
}

/** A finite number, else undefined. */
function num(x: unknown): number | undefined {
  return typeof x === 'number' && Number.isFinite(x) ? x : undefined;
}

/**
 * The one-line description a run gets in the Runs view, e.g. `epoch 2/10 · loss 0.412 · best 91.3%`.
 * Numbers are checked again here: a view built from other sources (an `ls` listing) may hold
 * anything, and a description must never throw (`${{ toString: 1 }}` does).
 */
export function describe(view: RunView, t: Translate = english): string {
  const parts: string[] = [];
  const epoch = num(view.epoch);
  const total = num(view.totalEpochs);
  const loss = num(view.loss);
  const best = num(view.bestValAcc);
  if (epoch !== undefined) parts.push(total ? t('epoch {0}/{1}', epoch, total) : t('epoch {0}', epoch));
  if (loss !== undefined) parts.push(t('loss {0}', loss.toPrecision(3)));
  if (best !== undefined) parts.push(t('best {0}%', (best * 100).toFixed(1)));
  if (view.phase === 'reconnecting') parts.push(t('reconnecting…'));
  if (view.phase === 'lost') parts.push(t('lost'));
  if (view.phase === 'finished' && view.status !== 'completed')
    parts.push(
      view.status === 'stopped'
        ? t('stopped')
        : view.status === 'failed'
          ? t('failed')
          : typeof view.status === 'string'
            ? view.status // a status this version does not know: the runner's word
            : '',
    );
  return parts.join(' · ');
}
