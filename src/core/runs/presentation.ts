// What the Runs view and the status bar say about a run, decided without vscode: icon names are
// codicon ids, texts are plain strings. The notifications are decided in notices.ts. Words go through
// `t` (English by default): whole phrases with placeholders, so Chinese keeps its own word order.
import type { RunHealth, RunState } from '../../shared/eventsProtocol';
import type { ListedRun, RunRecord } from './runIndex';
import { describe, etaSeconds, initialView, type RunView } from './state';
import { english, joined, type Translate } from '../l10n';
import { ENGLISH_WORDING, reasonText, reasonTitle, type Wording } from './runnerCodes';

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

/**
 * The icon of a run in the Runs view: a bad run (its files cannot be used, `ls`'s `problem`) shows
 * a warning whatever its state; a run that ended with a `problems` verdict keeps its state's glyph
 * in amber, so "completed" is green only for a healthy run.
 */
export function runIcon(
  state: ShownState,
  record: Pick<RunRecord, 'problem' | 'health'>,
  health?: RunHealth,
): { id: string; color?: string } {
  if (record.problem) return { id: 'warning', color: 'list.warningForeground' };
  const verdict = health ?? record.health;
  // The state's own glyph (the run did complete or stop), in amber instead of green.
  if (!isLive(state) && verdict?.verdict === 'problems' && state !== 'failed')
    return { id: stateIcon(state).id, color: 'list.warningForeground' };
  return stateIcon(state);
}

/** A state in words (`completed`, `launching`…). */
export function stateWord(state: ShownState, t: Translate = english): string {
  switch (state) {
    case 'launching':
      return t('launching');
    case 'running':
      return t('running');
    case 'reconnecting':
      return t('reconnecting');
    case 'completed':
      return t('completed');
    case 'stopped':
      return t('stopped');
    case 'failed':
      return t('failed');
    case 'lost':
      return t('lost');
  }
}

/** `completed with problems` for an ended run with a `problems` verdict, else the state as it is. */
export function stateWords(state: ShownState, health: RunHealth | undefined, t: Translate = english): string {
  if (health?.verdict === 'problems' && state === 'completed') return t('completed with problems');
  if (health?.verdict === 'problems' && state === 'stopped') return t('stopped with problems');
  return stateWord(state, t);
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

/**
 * Tooltip lines: name, id, where, state (with the verdict's reasons and fixes, or the bad run's
 * problem), tags and notes, times, and the spec summary when known.
 */
export function runTooltip(
  record: RunRecord,
  targetLabel: string,
  state: ShownState,
  specSummary?: string,
  health: RunHealth | undefined = record.health,
  /** How the tooltip is worded, the verdict's reasons included. */
  words: Wording = ENGLISH_WORDING,
): string {
  const t = words.t;
  const lines = [
    record.meta?.name ?? record.name ?? record.runId,
    t('{0} on {1}', record.runId, targetLabel),
    t('state: {0}', stateWords(state, health, t)),
  ];
  if (record.problem) lines.push(t('⚠ bad run: {0}', record.problem));
  if (health?.verdict === 'problems' && !isLive(state)) {
    for (const reason of health.reasons) {
      const r = reasonText(reason, words);
      lines.push(`⚠ ${r.message}${r.fix ? `\n   ${words.t('Fix: {0}', r.fix)}` : ''}`);
    }
  } else if (health?.verdict === 'healthy' && !isLive(state)) lines.push(t('verdict: healthy'));
  // Tags stay as the user typed them; the list is punctuated in the display language.
  if (record.meta?.tags.length) lines.push(t('tags: {0}', joined(record.meta.tags, t)));
  if (record.meta?.notes) lines.push(t('notes: {0}', record.meta.notes));
  const when = (s: number) => new Date(s * 1000).toLocaleString(words.language);
  if (record.startedAt) lines.push(t('started {0}', when(record.startedAt)));
  if (record.endedAt) lines.push(t('ended {0}', when(record.endedAt)));
  if (specSummary) lines.push(specSummary);
  else if (record.backbone) lines.push(record.backbone);
  if (record.resumedFrom) lines.push(t('resumed from {0}', record.resumedFrom));
  lines.push(record.runDir);
  // A multi-node run: its other nodes' run directories (target ids are `ssh:<host>`).
  for (const [i, n] of (record.nodes ?? []).entries())
    lines.push(t('node {0}: {1} {2}', i + 1, n.targetId.replace(/^ssh:/, ''), n.runDir));
  return lines.join('\n');
}

/**
 * A Runs-view description: the progress, what tells a resumed run from the run it continues (same
 * name), then the verdict or the bad run's problem first when there is one, and the tags.
 */
export function runDescription(
  progress: string,
  record: Pick<RunRecord, 'resumedFrom' | 'problem' | 'meta'>,
  opts: { state?: ShownState; health?: RunHealth } = {},
  t: Translate = english,
): string {
  let text = record.resumedFrom
    ? t('{0} · resumed from {1}', progress, record.resumedFrom.replace(/\.(ckpt|safetensors)$/, ''))
    : progress;
  if (record.problem) text = t('bad run · {0}', text);
  else if (opts.state && !isLive(opts.state) && opts.health?.verdict === 'problems' && opts.state !== 'failed')
    text = `${stateWords(opts.state, opts.health, t)} · ${text}`;
  const tags = record.meta?.tags ?? [];
  return tags.length ? `${text} · ${tags.map((t) => `#${t}`).join(' ')}` : text;
}

/**
 * The name each run shows (the runner's `ls` rule, docs/protocol.md `display_name`): the user's
 * meta name, else the spec's name, else the run id; when two or more runs of one list would show
 * the same name, each gets ` (XXXX)`, the last 4 hex digits of its run id (the whole run id when
 * it has none, or when those clash too). Computed here as well so that a run followed before any
 * `ls` (a fresh launch) is named like the listing will name it. Keyed by run id.
 */
export function displayNames(records: readonly Pick<RunRecord, 'runId' | 'name' | 'meta'>[]): Map<string, string> {
  const base = (r: Pick<RunRecord, 'runId' | 'name' | 'meta'>) => r.meta?.name || r.name || r.runId;
  const count = new Map<string, number>();
  for (const r of records) count.set(base(r), (count.get(base(r)) ?? 0) + 1);
  const out = new Map<string, string>();
  const groups = new Map<string, Pick<RunRecord, 'runId' | 'name' | 'meta'>[]>();
  for (const r of records) {
    const b = base(r);
    if ((count.get(b) ?? 0) < 2) out.set(r.runId, b);
    else groups.set(b, [...(groups.get(b) ?? []), r]);
  }
  for (const [b, rs] of groups) {
    const suffix = (r: { runId: string }) => /-([0-9a-f]{4})$/.exec(r.runId)?.[1];
    const suffixes = rs.map(suffix);
    const clash = suffixes.some((x, i) => x === undefined || suffixes.indexOf(x) !== i);
    for (const r of rs) out.set(r.runId, `${b} (${clash ? r.runId : suffix(r)})`);
  }
  return out;
}

/** `1h 02m`, `4m 05s`, `12s` (`1 小时 02 分` in Chinese). */
export function formatDuration(seconds: number, t: Translate = english): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (h) return t('{0}h {1}m', h, String(m).padStart(2, '0'));
  if (m) return t('{0}m {1}s', m, String(s % 60).padStart(2, '0'));
  return t('{0}s', s);
}

/** The status bar text for a live run, e.g. `$(sync~spin) flowers 2/10 · 340/1700 · loss 0.412 · 812 img/s · ETA 4m 05s`. */
export function statusBarText(name: string, view: RunView, t: Translate = english): string {
  const icon =
    view.phase === 'reconnecting'
      ? '$(debug-disconnect)'
      : view.phase === 'launching'
        ? '$(loading~spin)'
        : '$(sync~spin)';
  const parts = [`${icon} ${name}`];
  if (view.epoch !== undefined) parts[0] += ` ${view.epoch}${view.totalEpochs ? `/${view.totalEpochs}` : ''}`;
  if (view.step !== undefined) parts.push(`${view.step}${view.totalSteps ? `/${view.totalSteps}` : ''}`);
  // Numbers as in English: zh-CN writes the same digits and decimal point.
  if (typeof view.loss === 'number') parts.push(t('loss {0}', view.loss.toPrecision(3)));
  if (typeof view.imgPerS === 'number') parts.push(t('{0} img/s', Math.round(view.imgPerS)));
  const eta = etaSeconds(view);
  if (eta !== undefined && view.phase === 'running') parts.push(t('ETA {0}', formatDuration(eta, t)));
  const d = view.download;
  if (view.phase === 'launching' && d)
    parts.push(
      d.total
        ? t('downloading {0}: {1}%', d.source, Math.floor((100 * d.done) / d.total))
        : t('downloading {0}: {1} MB', d.source, (d.done / 1e6).toFixed(1)),
    );
  else if (view.phase === 'launching') parts.push(t('starting…'));
  if (view.phase === 'reconnecting') parts.push(t('reconnecting…'));
  return parts.join(' · ');
}

/**
 * The status bar text for a run that just ended: `$(pass) name completed`, or amber words
 * `$(warning) name completed with problems: <first reason>` when its verdict says so.
 */
export function finishedStatusText(
  name: string,
  status: 'completed' | 'stopped' | 'failed',
  health: RunHealth | undefined,
  t: Translate = english,
): { text: string; warning: boolean } {
  if (status !== 'failed' && health?.verdict === 'problems') {
    const first = health.reasons[0];
    const problems =
      status === 'completed' ? t('{0} completed with problems', name) : t('{0} stopped with problems', name);
    return {
      text: `$(warning) ${first ? t('{0}: {1}', problems, reasonTitle(first.code, t)) : problems}`,
      warning: true,
    };
  }
  const icon = status === 'completed' ? '$(pass)' : status === 'stopped' ? '$(debug-stop)' : '$(error)';
  const words =
    status === 'completed'
      ? t('{0} completed', name)
      : status === 'stopped'
        ? t('{0} stopped', name)
        : t('{0} failed', name);
  return { text: `${icon} ${words}`, warning: status === 'failed' };
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
export function describeListed(l: ListedRunDetail, t: Translate = english): string {
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
  return describe(view, t);
}
