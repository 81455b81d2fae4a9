// The Runs Table's rows and what can be done with them, without VS Code: one row per listed run
// (`ls`'s entry: status, summary.json's figures, meta, the flattened spec), the columns (fixed ones
// and the spec fields), filtering by text, tag, state and numeric ranges, and sorting. Pure; the
// table's model (tableModel.ts) keeps the view state and calls these.
import { runHealth, type RunState } from '../../shared/eventsProtocol';
import type { CellValue, ColumnView, TableFilter, TableSort } from '../../shared/runsTableProtocol';
import type { ListedRunDetail } from './presentation';
import { runMeta } from './runIndex';
import { ENGLISH_WORDING, reasonText, type Wording } from './runnerCodes';
import { differingKeys, type FlatSpec, type FlatValue } from './specDiff';

/** One target's `ls` answer (its runs already checked by parseListing). */
export interface TargetListing {
  targetId: string;
  targetLabel: string;
  runs: readonly ListedRunDetail[];
}

export interface TableRun {
  id: string;
  targetId: string;
  runId: string;
  runDir: string;
  state: RunState;
  name: string;
  tags: string[];
  health: 'healthy' | 'problems' | null;
  healthNote: string | null;
  problem: string | null;
  /** The fixed columns' values. */
  fixed: Record<string, CellValue>;
  spec: FlatSpec;
}

interface SearchText {
  /** Lower-case text a word of the text filter looks in: name, id, target, tags, spec values. */
  words: string;
  /** Lower-case `key=value` of each spec field, where a word with `=` looks (`freeze=none`). */
  pairs: string;
}

// Made on the first text filter, not with the rows: most openings of the table never filter by text.
const searchCache = new WeakMap<TableRun, SearchText>();
function searchOf(r: TableRun): SearchText {
  let s = searchCache.get(r);
  if (!s) {
    const words = [r.name, r.runId, String(r.fixed.target), ...r.tags, ...Object.values(r.spec).map(String)];
    s = {
      words: words.join('\n').toLowerCase(),
      pairs: Object.entries(r.spec)
        .map(([k, v]) => `\n${k}=${String(v)}\n`)
        .join('')
        .toLowerCase(),
    };
    searchCache.set(r, s);
  }
  return s;
}

const col = (key: string, label: string, kind: ColumnView['kind']): ColumnView => ({
  key,
  label,
  kind,
  spec: false,
  numeric: !['text', 'state', 'tags', 'value'].includes(kind),
});

/** The fixed columns, in the table's order. */
export const FIXED_COLUMNS: readonly ColumnView[] = [
  col('state', 'State', 'state'),
  col('name', 'Name', 'text'),
  col('target', 'Target', 'text'),
  col('tags', 'Tags', 'tags'),
  col('started_at', 'Started', 'time'),
  col('duration_s', 'Duration', 'duration'),
  col('epochs_done', 'Epochs', 'count'),
  col('best_val_acc', 'Best val acc', 'percent'),
  col('final_val_acc', 'Final val acc', 'percent'),
  col('best_val_loss', 'Best val loss', 'number'),
  col('img_per_s', 'Images/s', 'rate'),
  col('skipped_updates', 'Skipped updates', 'count'),
  col('run_id', 'Run id', 'text'),
];

/** A sweep's table has its trial numbers (from the `trial:<N>` tag) as a column. */
export const TRIAL_COLUMN: ColumnView = col('trial', 'Trial', 'count');

/**
 * The table of one sweep's trials (docs/sweeps.md): its runs are those tagged `sweep:<id>`, the
 * space's fields are columns even where the trials so far agree, and rows sort best-first by the
 * objective.
 */
export interface SweepScope {
  sweepId: string;
  /** The dotted spec fields the sweep searches (its `space`). */
  space: string[];
  /** The objective's column and direction, when known (`best_val_acc`, `maximize`). */
  objective?: { metric: string; direction: 'maximize' | 'minimize' };
}

/** The runs that are the sweep's trials. */
export function sweepTrials(runs: readonly TableRun[], sweepId: string): TableRun[] {
  const tag = `sweep:${sweepId}`;
  return runs.filter((r) => r.tags.includes(tag));
}

/** The columns a sweep's table starts with: state, trial, name, the results, then its space's fields. */
export function sweepDefaultKeys(scope: SweepScope): string[] {
  return [
    'state',
    'trial',
    ...defaultFixedKeys(false).filter((k) => k !== 'state' && k !== 'tags'),
    ...scope.space.map((k) => SPEC_PREFIX + k),
  ];
}

/** Shown unless the user chooses otherwise (Target only when the table spans several targets). */
export function defaultFixedKeys(multiTarget: boolean): string[] {
  return FIXED_COLUMNS.map((c) => c.key).filter((k) => k !== 'run_id' && (multiTarget || k !== 'target'));
}

export const SPEC_PREFIX = 'spec:';
export const rowId = (targetId: string, runId: string) => `${targetId}\u0000${runId}`;

const num = (x: unknown): number | null => (typeof x === 'number' && Number.isFinite(x) ? x : null);
const obj = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

function flatSpec(x: unknown): FlatSpec {
  const out: Record<string, FlatValue> = {};
  if (!obj(x)) return out;
  for (const [k, v] of Object.entries(x))
    if (v === null || typeof v === 'string' || typeof v === 'boolean' || num(v) !== null) out[k] = v as FlatValue;
  return out;
}

/** The rows of every listing (a multi-node run's other nodes are left out: the run is its master's). */
export function tableRuns(
  listings: readonly TargetListing[],
  now: number,
  /** How the health note is worded (the verdict's first reason, from its code). */
  words: Wording = ENGLISH_WORDING,
): TableRun[] {
  const out: TableRun[] = [];
  for (const { targetId, targetLabel, runs } of listings) {
    for (const l of runs) {
      if (typeof l.node_rank === 'number' && l.node_rank > 0) continue;
      out.push(tableRun(targetId, targetLabel, l, now, words));
    }
  }
  return out;
}

export function tableRun(
  targetId: string,
  targetLabel: string,
  l: ListedRunDetail,
  now: number,
  words: Wording = ENGLISH_WORDING,
): TableRun {
  const s = obj(l.summary) ? l.summary : {};
  const meta = runMeta(l.meta);
  const health = runHealth(l.health);
  const spec = flatSpec(l.spec_fields);
  const name = l.display_name || meta?.name || l.name || l.run_id;
  const tags = meta?.tags ?? [];
  const started = num(l.started_at) ?? num(s.started_at);
  const ended = num(l.ended_at);
  // Duration: the summary's active time (a resumed run's parts, without the gap between them); a
  // running run's grows from its last update; a run without a summary counts from status.json.
  let duration = num(s.duration_s);
  if (l.state === 'running') {
    const since = num(s.updated_at);
    duration =
      duration !== null && since !== null
        ? duration + Math.max(0, now - since)
        : started !== null
          ? now - started
          : null;
  } else if (duration === null && started !== null && ended !== null) {
    duration = ended - started;
  }
  const best = obj(l.best) && obj(l.best.metrics) ? num(l.best.metrics.val_acc) : null;
  const fixed: Record<string, CellValue> = {
    state: l.state,
    name,
    target: targetLabel,
    tags: tags.join(', '),
    started_at: started,
    duration_s: duration,
    epochs_done: num(s.epochs_done) ?? num(l.epoch),
    best_val_acc: num(s.best_val_acc) ?? best, // older runs: the best checkpoint's
    final_val_acc: num(s.final_val_acc),
    best_val_loss: num(s.best_val_loss),
    img_per_s: num(s.img_per_s),
    skipped_updates: num(s.skipped_updates),
    run_id: l.run_id,
    trial: trialNumber(tags),
  };
  return {
    id: rowId(targetId, l.run_id),
    targetId,
    runId: l.run_id,
    runDir: l.run_dir,
    state: l.state,
    name,
    tags,
    health: health?.verdict ?? null,
    healthNote: health?.reasons[0] ? reasonText(health.reasons[0], words).message : null,
    problem: typeof l.problem === 'string' && l.problem ? l.problem : null,
    fixed,
    spec,
  };
}

function trialNumber(tags: readonly string[]): number | null {
  const t = tags.find((x) => /^trial:\d+$/.test(x));
  return t === undefined ? null : Number(t.slice('trial:'.length));
}

/** A row's value in a column (fixed, or `spec:KEY`); undefined where the run lacks the spec field. */
export function cellOf(run: TableRun, key: string): CellValue | undefined {
  return key.startsWith(SPEC_PREFIX) ? run.spec[key.slice(SPEC_PREFIX.length)] : run.fixed[key];
}

/** Every spec field's column among the runs, in first-seen order; numeric when every value is a number. */
export function specColumns(runs: readonly TableRun[]): ColumnView[] {
  const numeric = new Map<string, boolean>();
  for (const r of runs)
    for (const k in r.spec) {
      const isNum = typeof r.spec[k] === 'number';
      const was = numeric.get(k);
      if (was === undefined || (was && !isNum)) numeric.set(k, isNum);
    }
  return [...numeric].map(([k, isNum]) => ({
    key: SPEC_PREFIX + k,
    label: k,
    kind: 'value',
    spec: true,
    numeric: isNum,
  }));
}

/** The spec columns whose values differ between the given runs. */
export function differingSpecKeys(runs: readonly TableRun[]): string[] {
  return differingKeys(runs.map((r) => r.spec)).map((k) => SPEC_PREFIX + k);
}

/**
 * The runs the filter lets through: every word of the text, any of the tags, any of the states,
 * every range. A word with `=` is a spec field and its value (`freeze=none`, `train.lr=0.01`: the
 * key may be cut at a dot from the left, the value is whole); other words match anywhere in the
 * name, run id, target, tags and spec values.
 */
export function filterRuns(runs: readonly TableRun[], f: TableFilter): TableRun[] {
  const words = f.text.toLowerCase().split(/\s+/).filter(Boolean);
  const tags = new Set(f.tags);
  const states = new Set(f.states);
  return runs.filter((r) => {
    if (states.size && !states.has(r.state)) return false;
    if (tags.size && !r.tags.some((t) => tags.has(t))) return false;
    if (words.length) {
      const t = searchOf(r);
      if (words.some((w) => (w.includes('=') ? !pairMatch(t.pairs, w) : !t.words.includes(w)))) return false;
    }
    for (const range of f.ranges) {
      const v = cellOf(r, range.key);
      if (range.min === null && range.max === null) continue;
      if (typeof v !== 'number') return false;
      if ((range.min !== null && v < range.min) || (range.max !== null && v > range.max)) return false;
    }
    return true;
  });
}

function pairMatch(pairs: string, word: string): boolean {
  if (pairs.includes(`\n${word}\n`)) return true;
  return pairs.includes(`.${word}\n`);
}

const STATE_ORDER: Record<string, number> = { running: 0, completed: 1, stopped: 2, failed: 3, lost: 4 };
const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

function compareCells(a: CellValue | undefined, b: CellValue | undefined, key: string): number {
  if (key === 'state') return (STATE_ORDER[String(a)] ?? 9) - (STATE_ORDER[String(b)] ?? 9);
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'number') return -1; // a spec field that is a number in some runs and text in others
  if (typeof b === 'number') return 1;
  return collator.compare(String(a), String(b));
}

const missing = (v: CellValue | undefined) => v === undefined || v === null || v === '';

/** Sorted by one column; runs without a value go last in either direction; ties newest first. */
export function sortRuns(runs: readonly TableRun[], sort: TableSort): TableRun[] {
  const sign = sort.dir === 'asc' ? 1 : -1;
  const keyed = runs.map((r) => ({ r, v: cellOf(r, sort.key) }));
  keyed.sort((x, y) => {
    const mx = missing(x.v);
    const my = missing(y.v);
    if (mx || my) return mx === my ? tie(x.r, y.r) : mx ? 1 : -1;
    return sign * compareCells(x.v, y.v, sort.key) || tie(x.r, y.r);
  });
  return keyed.map((k) => k.r);
}

function tie(a: TableRun, b: TableRun): number {
  return (
    ((b.fixed.started_at as number | null) ?? 0) - ((a.fixed.started_at as number | null) ?? 0) ||
    (a.id < b.id ? -1 : 1)
  );
}

/** Sort direction a column starts with: results and times best-first, names A to Z. */
export function firstDirection(column: ColumnView | undefined): 'asc' | 'desc' {
  if (!column) return 'asc';
  if (column.key === 'best_val_loss' || column.key === 'skipped_updates') return 'asc';
  return column.numeric && !column.spec ? 'desc' : 'asc';
}
