// The dashboard's config panel: a run's resolved spec, the weights' source and preprocessing and
// the versions it ran with, as rows of text. The spec comes from the run's spec.json when the host
// can read it (bounded, regular file only: runFiles.ts), else from run_started, which carries the
// same resolved spec on every target. Everything is flattened and capped here, so a hostile spec
// (deep, huge, odd types) costs the UI a bounded table of strings and nothing else.
import type { ConfigDiff, ConfigRow, RunConfig } from '../../shared/dashboardProtocol';
import type { RunStartedEvent } from '../../shared/eventsProtocol';
import { differingKeys, flattenSpec, formatFlatValue, specDiffRows } from '../runs/specDiff';

/** Rows per section and characters per value the panel is sent. */
export const MAX_CONFIG_ROWS = 400;
export const MAX_VALUE_CHARS = 300;
const MAX_DEPTH = 6;

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function text(v: unknown): string {
  const s = typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v));
  return s.length > MAX_VALUE_CHARS ? `${s.slice(0, MAX_VALUE_CHARS - 1)}…` : s;
}

/**
 * An object as dotted paths to leaf values (arrays and values deeper than MAX_DEPTH as JSON text);
 * `dropped` counts the rows past `max`.
 */
export function flatten(
  obj: Record<string, unknown>,
  max = MAX_CONFIG_ROWS,
  skip: ReadonlySet<string> = new Set(),
): { rows: ConfigRow[]; dropped: number } {
  const rows: ConfigRow[] = [];
  let dropped = 0;
  const walk = (o: Record<string, unknown>, prefix: string, depth: number) => {
    for (const [k, v] of Object.entries(o)) {
      const path = prefix ? `${prefix}.${k}` : k;
      if (skip.has(path)) continue;
      if (isObj(v) && depth < MAX_DEPTH && Object.keys(v).length > 0) {
        walk(v, path, depth + 1);
        continue;
      }
      if (rows.length >= max) dropped++;
      else rows.push({ path: text(path), value: text(v) });
    }
  };
  walk(obj, '', 0);
  return { rows, dropped };
}

/** The weights' rows: where they came from and how they loaded (the load report's lists are left out). */
const WEIGHT_FIELDS = ['source', 'url', 'cached', 'sha256', 'file', 'origin', 'variant'] as const;
const LOAD_COUNTS = ['loaded', 'missing', 'unexpected', 'mismatched'] as const;

function weightRows(p: unknown): ConfigRow[] {
  if (!isObj(p)) return [];
  const rows: ConfigRow[] = [];
  for (const f of WEIGHT_FIELDS) if (p[f] !== undefined && p[f] !== null) rows.push({ path: f, value: text(p[f]) });
  for (const f of LOAD_COUNTS) {
    const v = p[f];
    if (Array.isArray(v)) rows.push({ path: `${f} tensors`, value: String(v.length) });
    else if (typeof v === 'number') rows.push({ path: `${f} tensors`, value: String(v) });
  }
  return rows;
}

/** The versions and where the run trained: runner, MindSpore, Python, then target, host, workers. */
function versionRows(versions: unknown, device: unknown): ConfigRow[] {
  const rows = isObj(versions) ? flatten(versions, 20).rows : [];
  if (isObj(device)) {
    for (const f of ['target', 'host', 'ids', 'workers', 'onednn_max_cpu_isa'])
      if (device[f] !== undefined && device[f] !== null) rows.push({ path: `device.${f}`, value: text(device[f]) });
  }
  return rows;
}

/** The config from run_started, with `specFile` (spec.json's object) in place of its spec when given. */
export function runConfig(start: RunStartedEvent | undefined, specFile?: Record<string, unknown>): RunConfig | null {
  const spec = specFile ?? (start && isObj(start.spec) ? start.spec : undefined);
  if (!spec && !start) return null;
  const flat = flatten(spec ?? {});
  return {
    specSource: specFile ? 'spec.json' : 'run_started',
    spec: flat.rows,
    weights: weightRows(start?.pretrained),
    preprocess: isObj(start?.preprocess) ? flatten(start.preprocess, 40).rows : [],
    versions: start ? versionRows(start.versions, start.device) : [],
    truncated: flat.dropped,
  };
}

// ---- Compare Runs' labels ----------------------------------------------------------------------

/** Fields every run has its own value of, never a setting the user chose. */
const NOT_SETTINGS = new Set(['name', 'notes', 'tags']);

/**
 * Per run, its values of the spec fields that differ between `specs` (the runs' resolved specs,
 * flattened and compared as the Runs Table does: core/runs/specDiff.ts); a run without a spec yet
 * reads "—". At most `max` fields, in the spec's order.
 */
export function differingSettings(specs: readonly (Record<string, unknown> | undefined)[], max = 8): ConfigRow[][] {
  const flat = specs.map((s) => flattenSpec(s ?? {}));
  const keys = differingKeys(flat)
    .filter((k) => !NOT_SETTINGS.has(k))
    .slice(0, max);
  return flat.map((f) => keys.map((path) => ({ path, value: formatFlatValue(f[path]) })));
}

/**
 * Compare Runs' config diff: every spec field of the runs but NOT_SETTINGS (flattened and compared as the Runs
 * Table does), one value per run, the differing ones marked; the UI shows those first and the rest
 * on request. Bounded by specDiff's caps (FLAT_MAX_KEYS fields per run, FLAT_MAX_TEXT per value).
 */
export function configDiff(runs: readonly { key: string; spec: Record<string, unknown> | undefined }[]): ConfigDiff {
  const rows = specDiffRows(runs.map((r) => flattenSpec(r.spec ?? {})));
  return {
    runs: runs.map((r) => r.key),
    // the name, notes and tags head the columns or belong to the run, they are not its settings
    rows: rows
      .filter((r) => !NOT_SETTINGS.has(r.key))
      .map((r) => ({ path: r.key, values: r.values.map(formatFlatValue), differs: r.differs })),
  };
}
