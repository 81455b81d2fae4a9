// Sweeps in the Runs view: a sweep's trials are normal runs tagged `sweep:<id>` and `trial:<N>`
// (docs/protocol.md section 7); here they are gathered under one parent row per sweep, and the
// row's words (state, trials done, best value) are made from what sweep-ls or sweep-status said.
import { english, type Translate } from '../l10n';
import { stateWord } from '../runs/presentation';
import type { RunRecord } from '../runs/runIndex';
import type { ListedSweep, Objective, SweepBest, SweepCounts, SweepState } from '../../shared/sweepProtocol';

/** What a sweep row shows: sweep-ls's entry, updated by sweep-status while it runs. */
export interface SweepSummary {
  sweep_id: string;
  sweep_dir: string;
  name: string;
  state: SweepState;
  started_at: number | null;
  objective: Objective;
  trials_target: number;
  counts: SweepCounts | null;
  best: SweepBest | null;
}

export interface SweepGroup {
  sweepId: string;
  /** null: trials tagged with a sweep that sweep-ls has not listed (yet). */
  sweep: SweepSummary | null;
  /** By trial number. */
  trials: RunRecord[];
}

export type TopItem = { kind: 'sweep'; group: SweepGroup } | { kind: 'run'; record: RunRecord };

/** The sweep a run is a trial of, from its `sweep:<id>` tag. */
export function sweepOf(record: Pick<RunRecord, 'meta'>): string | undefined {
  const tag = record.meta?.tags.find((t) => t.startsWith('sweep:') && t.length > 'sweep:'.length);
  return tag?.slice('sweep:'.length);
}

/** The trial number from a `trial:<N>` tag. */
export function trialOf(record: Pick<RunRecord, 'meta'>): number | undefined {
  const tag = record.meta?.tags.find((t) => /^trial:\d+$/.test(t));
  return tag === undefined ? undefined : Number(tag.slice('trial:'.length));
}

/**
 * One target's top-level rows, newest first: each sweep (listed, or known only from its trials'
 * tags) with its trials beneath, and the runs that are no sweep's trials.
 */
export function groupRuns(runs: readonly RunRecord[], sweeps: readonly SweepSummary[]): TopItem[] {
  const groups = new Map<string, SweepGroup>();
  for (const s of sweeps) groups.set(s.sweep_id, { sweepId: s.sweep_id, sweep: s, trials: [] });
  const items: { at: number; item: TopItem }[] = [];
  for (const r of runs) {
    const id = sweepOf(r);
    if (id === undefined) {
      items.push({ at: r.startedAt, item: { kind: 'run', record: r } });
      continue;
    }
    let g = groups.get(id);
    if (!g) groups.set(id, (g = { sweepId: id, sweep: null, trials: [] }));
    g.trials.push(r);
  }
  for (const g of groups.values()) {
    g.trials.sort((a, b) => (trialOf(a) ?? Infinity) - (trialOf(b) ?? Infinity) || a.startedAt - b.startedAt);
    // A listed sweep with no start time and no trials yet (an older runner's, before its scheduler
    // started) sorts with the oldest, not (Math.min of nothing: Infinity) above everything.
    const at = g.sweep?.started_at ?? (g.trials.length ? Math.min(...g.trials.map((t) => t.startedAt)) : 0);
    items.push({ at, item: { kind: 'sweep', group: g } });
  }
  return items.sort((a, b) => b.at - a.at).map((x) => x.item);
}

/** Trials finished (counted toward the target): the sweep's counts, else its trial runs that ended. */
export function trialsDone(g: SweepGroup): number {
  if (g.sweep?.counts) return g.sweep.counts.counted;
  return g.trials.filter((t) => t.state !== 'running').length;
}

/** `running · 1/4 trials · best val acc 0.575 (t0)`, in the display language (`t`). */
export function sweepDescription(g: SweepGroup, t: Translate = english): string {
  const s = g.sweep;
  if (!s) return g.trials.length === 1 ? t('1 trial') : t('{0} trials', g.trials.length);
  const parts: string[] = [stateWord(s.state, t), t('{0}/{1} trials', trialsDone(g), s.trials_target)];
  if (s.best)
    parts.push(t('best {0} {1} (t{2})', metricWords(s.objective.metric), formatValue(s.best.value), s.best.number));
  return parts.join(' · ');
}

/** `best_val_acc` -> `val acc`. */
export function metricWords(metric: string): string {
  return metric.replace(/^(best|final)_/, '').replace(/_/g, ' ');
}

export function formatValue(v: number | null): string {
  if (v === null) return '–';
  return Math.abs(v) >= 1000 || (v !== 0 && Math.abs(v) < 1e-3) ? v.toExponential(2) : String(Number(v.toFixed(4)));
}

/** Merge of sweep-ls's entry with a fresher sweep-status (counts and best while it runs). */
export function summaryOf(listed: ListedSweep, status?: Pick<SweepSummary, 'state' | 'counts' | 'best'>): SweepSummary {
  return status ? { ...listed, state: status.state, counts: status.counts, best: status.best } : listed;
}
