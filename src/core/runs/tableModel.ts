// The Runs Table's state, owned by the host: the listed runs, the sort, the filter, the chosen
// columns, the selection and the config diff. It takes the UI's validated messages and answers
// with what the host must do (nothing, list again, compare, delete); `snapshot()` is what the UI
// draws. No VS Code here: the panel (src/vscode/runsTable/panel.ts) and the browser test drive it.
import type {
  ColumnView,
  DiffView,
  RowView,
  TableFilter,
  TableSort,
  TableState,
  UiMessage,
} from '../../shared/runsTableProtocol';
import { canDelete } from './presentation';
import { ENGLISH_WORDING, type Wording } from './runnerCodes';
import { formatFlatValue, specDiffRows } from './specDiff';
import {
  FIXED_COLUMNS,
  cellOf,
  defaultFixedKeys,
  differingSpecKeys,
  filterRuns,
  firstDirection,
  sortRuns,
  specColumns,
  sweepDefaultKeys,
  sweepTrials,
  tableRuns,
  TRIAL_COLUMN,
  type SweepScope,
  type TableRun,
  type TargetListing,
} from './table';

/** What the host does after a message. */
export type TableAction =
  { type: 'none' } | { type: 'refresh' } | { type: 'compare'; runs: TableRun[] } | { type: 'delete'; runs: TableRun[] };

/** A sweep's rows best-first by its objective (a fixed column: best_val_acc, best_val_loss, final_val_acc). */
function sweepSort(scope: SweepScope): TableSort {
  const o = scope.objective;
  if (!o || !FIXED_COLUMNS.some((c) => c.key === o.metric)) return { key: 'trial', dir: 'asc' };
  return { key: o.metric, dir: o.direction === 'minimize' ? 'asc' : 'desc' };
}

const NO_FILTER: TableFilter = { text: '', tags: [], states: [], ranges: [] };

export class RunsTableModel {
  private runs: TableRun[] = [];
  private byId = new Map<string, TableRun>();
  private errors: string[] = [];
  private loading = true;
  private sort: TableSort = { key: 'started_at', dir: 'desc' };
  private filter: TableFilter = NO_FILTER;
  private chosen: string[] | null = null;
  private selected: string[] = [];
  private diff: { ids: string[]; onlyDiffering: boolean } | null = null;
  /** Every column (fixed, then the runs' spec fields): changes only with the listing. */
  private columnsAll: ColumnView[] = [...FIXED_COLUMNS];
  /** The filtered runs and the spec fields that differ among them: change with the listing or the filter. */
  private listedCache: { runs: TableRun[]; differs: Set<string> } | null = null;

  constructor(
    private readonly title: string,
    /** Whether the table spans several targets (then Target is a default column). */
    private readonly multiTarget: boolean,
    /** Only one sweep's trials, with its space as columns and its objective as the sort. */
    private scope?: SweepScope,
    /** How the runs' health notes are worded (the glue passes vscode.l10n.t and the display language). */
    private readonly words: Wording = ENGLISH_WORDING,
  ) {
    if (scope) this.sort = sweepSort(scope);
  }

  /** The sweep's space and objective, once known (sweep-status); the sort follows the objective if untouched. */
  setSweepScope(scope: SweepScope): void {
    const untouched =
      !this.scope || (this.sort.key === sweepSort(this.scope).key && this.sort.dir === sweepSort(this.scope).dir);
    this.scope = scope;
    if (untouched) this.sort = sweepSort(scope);
  }

  /** New listings (after a refresh): selection and diff keep the runs that are still there. */
  setListings(listings: readonly TargetListing[], errors: readonly string[], now: number): void {
    const runs = tableRuns(listings, now, this.words);
    this.runs = this.scope ? sweepTrials(runs, this.scope.sweepId) : runs;
    this.byId = new Map(this.runs.map((r) => [r.id, r]));
    this.columnsAll = [...FIXED_COLUMNS, ...(this.scope ? [TRIAL_COLUMN] : []), ...specColumns(this.runs)];
    this.listedCache = null;
    this.errors = [...errors];
    this.loading = false;
    this.selected = this.selected.filter((id) => this.byId.has(id));
    if (this.diff) {
      const ids = this.diff.ids.filter((id) => this.byId.has(id));
      this.diff = ids.length >= 2 ? { ...this.diff, ids } : null;
    }
  }

  setLoading(loading: boolean): void {
    this.loading = loading;
  }

  handle(m: UiMessage): TableAction {
    switch (m.type) {
      case 'ready':
        return { type: 'none' };
      case 'refresh':
        return { type: 'refresh' };
      case 'sort': {
        const column = this.allColumns().find((c) => c.key === m.key);
        if (!column) return { type: 'none' };
        this.sort =
          this.sort.key === m.key
            ? { key: m.key, dir: this.sort.dir === 'asc' ? 'desc' : 'asc' }
            : { key: m.key, dir: firstDirection(column) };
        return { type: 'none' };
      }
      case 'filter':
        this.filter = m.filter;
        this.listedCache = null;
        return { type: 'none' };
      case 'columns':
        if (m.mode === 'auto') this.chosen = null;
        else {
          const known = new Set(this.allColumns().map((c) => c.key));
          this.chosen = m.keys.filter((k) => known.has(k));
        }
        return { type: 'none' };
      case 'select':
        this.selected = [...new Set(m.ids.filter((id) => this.byId.has(id)))];
        return { type: 'none' };
      case 'diff':
        if (this.selected.length >= 2) this.diff = { ids: [...this.selected], onlyDiffering: m.onlyDiffering };
        else if (this.diff) this.diff = { ...this.diff, onlyDiffering: m.onlyDiffering };
        return { type: 'none' };
      case 'closeDiff':
        this.diff = null;
        return { type: 'none' };
      case 'compare': {
        const runs = this.selectedRuns();
        return runs.length >= 2 ? { type: 'compare', runs } : { type: 'none' };
      }
      case 'delete': {
        const runs = this.selectedRuns().filter((r) => canDelete(r.state));
        return runs.length ? { type: 'delete', runs } : { type: 'none' };
      }
    }
  }

  selectedRuns(): TableRun[] {
    return this.selected.map((id) => this.byId.get(id)).filter((r): r is TableRun => r !== undefined);
  }

  private allColumns(): ColumnView[] {
    return this.columnsAll;
  }

  private listed(): { runs: TableRun[]; differs: Set<string> } {
    if (!this.listedCache) {
      const runs = filterRuns(this.runs, this.filter);
      this.listedCache = { runs, differs: new Set(differingSpecKeys(runs)) };
    }
    return this.listedCache;
  }

  snapshot(): TableState {
    const { runs: listed, differs } = this.listed();
    const all = this.allColumns();
    // The spec's own `name` is left to the Name column (the display name) unless chosen.
    const fixedKeys = this.scope ? sweepDefaultKeys(this.scope) : defaultFixedKeys(this.multiTarget);
    const shownKeys = this.chosen ?? [
      ...fixedKeys,
      ...all.filter((c) => differs.has(c.key) && c.key !== 'spec:name' && !fixedKeys.includes(c.key)).map((c) => c.key),
    ];
    const byKey = new Map(all.map((c) => [c.key, c]));
    const columns = shownKeys.map((k) => byKey.get(k)).filter((c): c is ColumnView => c !== undefined);
    const shown = new Set(columns.map((c) => c.key));
    const rows: RowView[] = sortRuns(listed, this.sort).map((r) => ({
      id: r.id,
      targetId: r.targetId,
      runId: r.runId,
      deletable: canDelete(r.state),
      health: r.health,
      healthNote: r.healthNote,
      problem: r.problem,
      values: Object.fromEntries(columns.map((c) => [c.key, cellOf(r, c.key) ?? null])),
    }));
    return {
      title: this.title,
      loading: this.loading,
      errors: this.errors,
      total: this.runs.length,
      rows,
      columns,
      choices: all.map((c) => ({ ...c, shown: shown.has(c.key), differs: differs.has(c.key) })),
      columnMode: this.chosen ? 'chosen' : 'auto',
      sort: this.sort,
      filter: this.filter,
      tags: [...new Set(this.runs.flatMap((r) => r.tags))].sort(),
      states: [...new Set(this.runs.map((r) => r.state))].sort(),
      selected: this.selected,
      diff: this.diffView(),
    };
  }

  private diffView(): DiffView | null {
    if (!this.diff) return null;
    const runs = this.diff.ids.map((id) => this.byId.get(id)).filter((r): r is TableRun => r !== undefined);
    return {
      runs: runs.map((r) => ({ id: r.id, name: r.name })),
      rows: specDiffRows(
        runs.map((r) => r.spec),
        this.diff.onlyDiffering,
      ).map((row) => ({ key: row.key, values: row.values.map(formatFlatValue), differs: row.differs })),
      onlyDiffering: this.diff.onlyDiffering,
    };
  }
}
