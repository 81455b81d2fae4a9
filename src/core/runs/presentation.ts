// What the Runs view, the status bar and the notifications say about a run, decided without
// vscode: icon names are codicon ids, texts are plain strings, actions are labels the glue maps.
import type { RunFinishedEvent, RunState, WarningEvent } from '../../shared/eventsProtocol';
import type { ListedRun, RunRecord } from './runIndex';
import { describe, etaSeconds, initialView, type RunView } from './state';

/** The state a run shows: a live stream's phase wins over the index's last known state. */
export type ShownState = RunState | 'launching' | 'reconnecting';

export function shownState(record: Pick<RunRecord, 'state'>, view?: RunView): ShownState {
  if (!view) return record.state;
  switch (view.phase) {
    case 'launching':
    case 'reconnecting':
      return view.phase;
    case 'running':
      return 'running';
    case 'lost':
      return 'lost';
    case 'finished':
      return view.status ?? record.state;
  }
}

/** Codicon id and theme colour id for each state. */
export function stateIcon(state: ShownState): { id: string; color?: string } {
  switch (state) {
    case 'launching':
      return { id: 'loading~spin' };
    case 'running':
      return { id: 'sync~spin', color: 'charts.blue' };
    case 'reconnecting':
      return { id: 'debug-disconnect', color: 'charts.yellow' };
    case 'completed':
      return { id: 'pass', color: 'testing.iconPassed' };
    case 'stopped':
      return { id: 'debug-stop', color: 'charts.yellow' };
    case 'failed':
      return { id: 'error', color: 'testing.iconFailed' };
    case 'lost':
      return { id: 'question', color: 'charts.orange' };
  }
}

/** Whether a run can take Stop / Save Checkpoint Now (the runner refuses anything but a running run). */
export function isLive(state: ShownState): boolean {
  return state === 'running' || state === 'launching' || state === 'reconnecting';
}

/** Delete is offered only for runs that ended: deleting a live run's folder would break it. */
export function canDelete(state: ShownState): boolean {
  return state === 'completed' || state === 'stopped' || state === 'failed' || state === 'lost';
}

/** The tree item's contextValue: `run.<state>` plus `.live` or `.done`, for `when` clauses. */
export function runContextValue(state: ShownState): string {
  return `run.${state}.${isLive(state) ? 'live' : 'done'}`;
}

/** Tooltip lines: id, where, state, times, and the spec summary when known. */
export function runTooltip(record: RunRecord, targetLabel: string, state: ShownState, specSummary?: string): string {
  const lines = [`${record.name ?? record.runId}`, `${record.runId} on ${targetLabel}`, `state: ${state}`];
  if (record.startedAt) lines.push(`started ${new Date(record.startedAt * 1000).toLocaleString()}`);
  if (record.endedAt) lines.push(`ended ${new Date(record.endedAt * 1000).toLocaleString()}`);
  if (specSummary) lines.push(specSummary);
  else if (record.backbone) lines.push(record.backbone);
  if (record.resumedFrom) lines.push(`resumed from ${record.resumedFrom}`);
  lines.push(record.runDir);
  // A multi-node run: its other nodes' run directories (target ids are `ssh:<host>`).
  for (const [i, n] of (record.nodes ?? []).entries()) lines.push(`node ${i + 1}: ${n.targetId.replace(/^ssh:/, '')} ${n.runDir}`);
  return lines.join('\n');
}

/** A Runs-view description with what tells a resumed run from the run it continues (same name). */
export function runDescription(progress: string, record: Pick<RunRecord, 'resumedFrom'>): string {
  return record.resumedFrom ? `${progress} · resumed from ${record.resumedFrom.replace(/\.(ckpt|safetensors)$/, '')}` : progress;
}

/** `1h 02m`, `4m 05s`, `12s`. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (h) return `${h}h ${String(m).padStart(2, '0')}m`;
  if (m) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  return `${s}s`;
}

/** The status bar text for a live run, e.g. `$(sync~spin) flowers 2/10 · 340/1700 · loss 0.412 · 812 img/s · ETA 4m 05s`. */
export function statusBarText(name: string, view: RunView): string {
  const icon = view.phase === 'reconnecting' ? '$(debug-disconnect)' : view.phase === 'launching' ? '$(loading~spin)' : '$(sync~spin)';
  const parts = [`${icon} ${name}`];
  if (view.epoch !== undefined) parts[0] += ` ${view.epoch}${view.totalEpochs ? `/${view.totalEpochs}` : ''}`;
  if (view.step !== undefined) parts.push(`${view.step}${view.totalSteps ? `/${view.totalSteps}` : ''}`);
  if (typeof view.loss === 'number') parts.push(`loss ${view.loss.toPrecision(3)}`);
  if (typeof view.imgPerS === 'number') parts.push(`${Math.round(view.imgPerS)} img/s`);
  const eta = etaSeconds(view);
  if (eta !== undefined && view.phase === 'running') parts.push(`ETA ${formatDuration(eta)}`);
  if (view.phase === 'launching') parts.push('starting…');
  if (view.phase === 'reconnecting') parts.push('reconnecting…');
  return parts.join(' · ');
}

export type NoticeAction = 'Open Dashboard' | 'Show Checkpoints' | 'Show Console';

export interface Notice {
  severity: 'info' | 'warning' | 'error';
  message: string;
  actions: NoticeAction[];
}

/** The notification for a run's end. */
export function finishNotice(name: string, e: RunFinishedEvent): Notice {
  const best = e.best?.metrics && typeof e.best.metrics.val_acc === 'number' ? `, best val_acc ${(e.best.metrics.val_acc * 100).toFixed(1)}%` : '';
  if (e.status === 'completed') {
    return { severity: 'info', message: `Ascend run "${name}" completed${best}.`, actions: ['Open Dashboard', 'Show Checkpoints'] };
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
  return { severity: 'error', message: `Ascend run "${name}" was lost: its training process is gone without finishing.`, actions: ['Show Console'] };
}

/** Runner warnings worth a notification: every one, with its code (unknown codes as they are). */
export function warningNotice(name: string, e: WarningEvent): Notice {
  return { severity: 'warning', message: `Ascend run "${name}": ${e.message} [${e.code}]`, actions: [] };
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

/** A run as `ls` lists it, with the progress fields `ls` adds (docs/protocol.md, section 4). */
export interface ListedRunDetail extends ListedRun {
  /** The spec's train.epochs. */
  epochs?: number | null;
  epoch?: number | null;
  step?: number | null;
  loss?: number | null;
  /** The best checkpoint's manifest entry (file, epoch, step, metrics). */
  best?: { metrics?: { val_acc?: number | null; [metric: string]: unknown } | null } | null;
}

/** The Runs view description of a listed run, in the same words a streamed run gets. */
export function describeListed(l: ListedRunDetail): string {
  const status = l.state === 'completed' || l.state === 'stopped' || l.state === 'failed' ? l.state : undefined;
  const view: RunView = {
    ...initialView(),
    phase: status ? 'finished' : l.state === 'lost' ? 'lost' : 'running',
    status,
    epoch: l.epoch ?? undefined,
    totalEpochs: l.epochs ?? undefined,
    step: l.step ?? undefined,
    loss: l.loss ?? undefined,
    bestValAcc: l.best?.metrics?.val_acc ?? undefined,
  };
  return describe(view);
}
