// Messages between the Runs Table (webview/runsTable) and its host (src/vscode/runsTable/panel.ts,
// driving src/core/runs/tableModel.ts). The host owns the rows and the view state (sort, filters,
// columns, selection, config diff) and sends all of it as one snapshot after each change and when
// the panel becomes visible again (a hidden webview drops messages). The UI is untrusted: what it
// sends goes through `validateTableMessage`, which builds fresh bounded objects, and may only name
// rows and columns the host knows (checked again by the model).

export type CellValue = string | number | boolean | null;

/** How a column's values are shown and compared: numbers sort as numbers, text as text. */
// `value` is a spec field's value exactly as written (0.0001 stays 0.0001: a diff must not round).
export type ColumnKind =
  'text' | 'value' | 'number' | 'percent' | 'duration' | 'time' | 'count' | 'rate' | 'state' | 'tags';

export interface ColumnView {
  /** A fixed column's name (`best_val_acc`) or `spec:` and a dotted spec key (`spec:train.lr`). */
  key: string;
  label: string;
  kind: ColumnKind;
  /** A spec field's column. */
  spec: boolean;
  /** Numeric: it can take a range filter. */
  numeric: boolean;
}

export interface RowView {
  /** `targetId` and `runId`, unique in the table. */
  id: string;
  targetId: string;
  runId: string;
  /** Ended runs only (a live run's folder must not go). */
  deletable: boolean;
  /** 'healthy', 'problems', or null (no verdict: running, older runs). */
  health: 'healthy' | 'problems' | null;
  /** The first health reason's message, for the state cell's tooltip. */
  healthNote: string | null;
  problem: string | null;
  /** Every column's value, by column key (spec columns too, absent where the run lacks the field). */
  values: Record<string, CellValue>;
}

export interface RangeFilter {
  key: string;
  min: number | null;
  max: number | null;
}

export interface TableFilter {
  text: string;
  /** Runs with any of these tags (none: no tag filter). */
  tags: string[];
  /** Runs in any of these states (none: every state). */
  states: string[];
  ranges: RangeFilter[];
}

export interface TableSort {
  key: string;
  dir: 'asc' | 'desc';
}

export interface DiffView {
  runs: { id: string; name: string }[];
  rows: { key: string; values: string[]; differs: boolean }[];
  onlyDiffering: boolean;
}

export interface TableState {
  title: string;
  loading: boolean;
  /** One sentence per target whose listing failed (its runs are missing from the table). */
  errors: string[];
  /** Runs listed before filtering. */
  total: number;
  rows: RowView[];
  /** The columns shown, in order. */
  columns: ColumnView[];
  /** Every column the user may choose (fixed, then every spec field), and whether it is shown. */
  choices: (ColumnView & { shown: boolean; differs: boolean })[];
  /** `auto`: the default columns and the spec fields that differ between the listed runs. */
  columnMode: 'auto' | 'chosen';
  sort: TableSort;
  filter: TableFilter;
  /** Every tag and state among the listed runs, for the filter's choices. */
  tags: string[];
  states: string[];
  selected: string[];
  diff: DiffView | null;
}

export type HostMessage = { type: 'state'; state: TableState };

export type UiMessage =
  | { type: 'ready' }
  | { type: 'refresh' }
  | { type: 'sort'; key: string }
  | { type: 'filter'; filter: TableFilter }
  | { type: 'columns'; mode: 'auto' } // back to the default columns
  | { type: 'columns'; mode: 'chosen'; keys: string[] }
  | { type: 'select'; ids: string[] }
  | { type: 'diff'; onlyDiffering: boolean }
  | { type: 'closeDiff' }
  | { type: 'compare' }
  | { type: 'delete' };

export type Validated = { ok: true; message: UiMessage } | { ok: false; error: string };

const MAX_KEY = 300;
const MAX_TEXT = 200;
const MAX_LIST = 5000;

const isObj = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
const str = (x: unknown, max = MAX_KEY): x is string => typeof x === 'string' && x.length <= max;
const strList = (x: unknown, max = MAX_LIST): x is string[] =>
  Array.isArray(x) && x.length <= max && x.every((s) => str(s));
const bound = (x: unknown): number | null | undefined =>
  x === null || x === undefined ? null : typeof x === 'number' && Number.isFinite(x) ? x : undefined;

function filterOf(x: unknown): TableFilter | string {
  if (!isObj(x)) return 'filter: must be an object';
  if (!str(x.text, MAX_TEXT)) return `filter.text: must be text of at most ${MAX_TEXT} characters`;
  if (!strList(x.tags, 200)) return 'filter.tags: must be a list of tags';
  if (!strList(x.states, 20)) return 'filter.states: must be a list of states';
  if (!Array.isArray(x.ranges) || x.ranges.length > 50) return 'filter.ranges: must be a list of at most 50 ranges';
  const ranges: RangeFilter[] = [];
  for (const r of x.ranges as unknown[]) {
    if (!isObj(r) || !str(r.key)) return 'filter.ranges: each range needs a column key';
    const min = bound(r.min);
    const max = bound(r.max);
    if (min === undefined || max === undefined) return `filter.ranges (${r.key}): min and max must be numbers or empty`;
    ranges.push({ key: r.key, min, max });
  }
  return { text: x.text, tags: [...x.tags], states: [...x.states], ranges };
}

/** Checks a message from the UI and copies what it needs into a fresh object. */
export function validateTableMessage(raw: unknown): Validated {
  if (!isObj(raw)) return { ok: false, error: 'message is not an object' };
  const m = raw;
  switch (m.type) {
    case 'ready':
    case 'refresh':
    case 'closeDiff':
    case 'compare':
    case 'delete':
      return { ok: true, message: { type: m.type } };
    case 'sort':
      return str(m.key)
        ? { ok: true, message: { type: 'sort', key: m.key } }
        : { ok: false, error: 'sort: "key" must be a column key' };
    case 'filter': {
      const f = filterOf(m.filter);
      return typeof f === 'string' ? { ok: false, error: f } : { ok: true, message: { type: 'filter', filter: f } };
    }
    case 'columns':
      if (m.mode === 'auto') return { ok: true, message: { type: 'columns', mode: 'auto' } };
      if (m.mode === 'chosen' && strList(m.keys, 1000))
        return { ok: true, message: { type: 'columns', mode: 'chosen', keys: [...m.keys] } };
      return { ok: false, error: 'columns: "mode" must be auto, or chosen with "keys" a list of column keys' };
    case 'select':
      return strList(m.ids)
        ? { ok: true, message: { type: 'select', ids: [...m.ids] } }
        : { ok: false, error: 'select: "ids" must be a list of row ids' };
    case 'diff':
      return typeof m.onlyDiffering === 'boolean'
        ? { ok: true, message: { type: 'diff', onlyDiffering: m.onlyDiffering } }
        : { ok: false, error: 'diff: "onlyDiffering" must be true or false' };
    default:
      return { ok: false, error: `unknown message type ${JSON.stringify(m.type)?.slice(0, 40)}` };
  }
}

/** Checks a host message in the UI (the host is trusted; a stale or foreign message is ignored). */
export function isHostMessage(raw: unknown): raw is HostMessage {
  return isObj(raw) && raw.type === 'state' && isObj(raw.state) && Array.isArray(raw.state.rows);
}

/** A cell as text, by its column's kind; a missing value is a dash. Shared so host tests and UI agree. */
export function formatCell(v: CellValue | undefined, kind: ColumnKind): string {
  if (v === undefined || v === null || v === '') return '—';
  if (typeof v !== 'number') return String(v);
  switch (kind) {
    case 'percent':
      return `${(v * 100).toFixed(1)}%`;
    case 'duration':
      return duration(v);
    case 'time':
      return new Date(v * 1000).toISOString().slice(0, 16).replace('T', ' ');
    case 'rate':
      return v >= 100 ? v.toFixed(0) : v.toFixed(1);
    case 'count':
      return String(Math.round(v));
    case 'number':
      return Number.isInteger(v)
        ? String(v)
        : Math.abs(v) < 1e-3 || Math.abs(v) >= 1e5
          ? v.toExponential(2)
          : String(+v.toPrecision(4));
    default:
      return String(v);
  }
}

function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (h) return `${h}h ${String(m).padStart(2, '0')}m`;
  if (m) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  return `${s}s`;
}
