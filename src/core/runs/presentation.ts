// What the Runs view and the status bar say about a run, decided without vscode: icon names are
// codicon ids, texts are plain strings. The notifications are decided in notices.ts.
import type { RunState } from '../../shared/eventsProtocol';
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
  for (const [i, n] of (record.nodes ?? []).entries())
    lines.push(`node ${i + 1}: ${n.targetId.replace(/^ssh:/, '')} ${n.runDir}`);
  return lines.join('\n');
}

/** A Runs-view description with what tells a resumed run from the run it continues (same name). */
export function runDescription(progress: string, record: Pick<RunRecord, 'resumedFrom'>): string {
  return record.resumedFrom
    ? `${progress} · resumed from ${record.resumedFrom.replace(/\.(ckpt|safetensors)$/, '')}`
    : progress;
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
  const icon =
    view.phase === 'reconnecting'
      ? '$(debug-disconnect)'
      : view.phase === 'launching'
        ? '$(loading~spin)'
        : '$(sync~spin)';
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
