// Which spec fields tell runs apart: the Runs Table shows only those as columns, and Compare Runs
// and the table's config diff put them side by side. Pure: specs in, keys and rows out.
//
// A flat spec maps dotted keys (`train.lr`, `model.freeze`) to JSON scalars. Lists are kept whole
// as their compact JSON text (`device.ids: "[0,1]"`): a list is one setting to a user, and indexing
// it would turn one changed list into many columns. The runner's `ls` flattens the same way
// (runner/ascend_finetune/runlist.py), so a spec read from `ls` and one read from an event stream
// compare equal.

export type FlatValue = string | number | boolean | null;
export type FlatSpec = Readonly<Record<string, FlatValue>>;

/** Bounds so one odd spec cannot blow up a table: keys kept, and characters per text value. */
export const FLAT_MAX_KEYS = 400;
export const FLAT_MAX_TEXT = 200;

/** Dotted keys of a nested spec; see the header for lists. Keys beyond FLAT_MAX_KEYS are dropped. */
export function flattenSpec(spec: unknown, maxKeys = FLAT_MAX_KEYS): Record<string, FlatValue> {
  const out: Record<string, FlatValue> = {};
  let n = 0;
  const walk = (x: unknown, prefix: string, depth: number): void => {
    for (const [k, v] of Object.entries(x as Record<string, unknown>)) {
      if (n >= maxKeys) return;
      const path = prefix === '' ? k : `${prefix}.${k}`;
      if (v !== null && typeof v === 'object' && !Array.isArray(v) && depth < 8) {
        walk(v, path, depth + 1);
      } else {
        out[path] = scalar(v);
        n++;
      }
    }
  };
  if (spec !== null && typeof spec === 'object' && !Array.isArray(spec)) walk(spec, '', 0);
  return out;
}

function scalar(v: unknown): FlatValue {
  if (v === null || typeof v === 'boolean') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  const text = typeof v === 'string' ? v : (JSON.stringify(v) ?? null);
  if (text === null) return null;
  return text.length > FLAT_MAX_TEXT ? `${text.slice(0, FLAT_MAX_TEXT - 1)}…` : text;
}

/** A value as one cell shows it; a key a run lacks reads "—". */
export function formatFlatValue(v: FlatValue | undefined): string {
  if (v === undefined) return '—';
  if (v === null) return 'null';
  return String(v);
}

/** Same value in the sense a diff means: scalars by identity, so `1` and `"1"` differ. */
function same(a: FlatValue | undefined, b: FlatValue | undefined): boolean {
  return a === b;
}

/**
 * The keys whose values are not all the same across the given specs, in first-seen order (the
 * spec's own order: data, model, train, ...). A key some runs lack and others have differs.
 * Fewer than two specs have no differences.
 */
export function differingKeys(specs: readonly FlatSpec[]): string[] {
  if (specs.length < 2) return [];
  const out: string[] = [];
  for (const k of allKeys(specs)) {
    const first = specs[0][k];
    if (specs.some((s) => !same(s[k], first))) out.push(k);
  }
  return out;
}

/** Every key any spec has, in first-seen order. */
export function allKeys(specs: readonly FlatSpec[]): string[] {
  const seen = new Set<string>();
  for (const s of specs) for (const k of Object.keys(s)) seen.add(k);
  return [...seen];
}

export interface SpecDiffRow {
  key: string;
  /** One per spec, in the order given; undefined where that run lacks the key. */
  values: (FlatValue | undefined)[];
  differs: boolean;
}

/**
 * The config diff: one row per key, the runs side by side, `differs` marking the rows to
 * highlight. `onlyDiffering` drops the rows where all runs agree.
 */
export function specDiffRows(specs: readonly FlatSpec[], onlyDiffering = false): SpecDiffRow[] {
  const differ = new Set(differingKeys(specs));
  const rows: SpecDiffRow[] = [];
  for (const key of allKeys(specs)) {
    const differs = differ.has(key);
    if (onlyDiffering && !differs) continue;
    rows.push({ key, values: specs.map((s) => (Object.hasOwn(s, key) ? s[key] : undefined)), differs });
  }
  return rows;
}
