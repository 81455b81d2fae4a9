// The host's gate for messages from a dashboard UI. A webview or a browser tab is untrusted input:
// only the four known message types pass, with finite numbers inside their bounds and strings of a
// bounded size; the result is a fresh object holding only the known fields, so nothing extra the
// sender attached (a __proto__, a path) reaches the host's code.
import type { UiMessage } from './dashboardProtocol';
import { stepsCovered, type RunEvent } from './eventsProtocol';

/** Plot widths in CSS pixels: wide enough for any monitor, small enough to bound a snapshot. */
export const MIN_WIDTH = 16;
export const MAX_WIDTH = 8192;
/** A step bound: the runner's steps are integers from 1; larger is nonsense. */
export const MAX_STEP = 1e12;
export const MAX_NAME_CHARS = 128;
/** CSV of a million-step run is ~60 MB; a PNG data URL of a 4k chart a few MB. */
export const MAX_EXPORT_CHARS = 64 * 1024 * 1024;

export type Validated = { ok: true; message: UiMessage } | { ok: false; error: string };

const fail = (error: string): Validated => ({ ok: false, error });

export function validateUiMessage(raw: unknown): Validated {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return fail('a message must be an object');
  const m = raw as Record<string, unknown>;
  const type = m.type;
  switch (type) {
    case 'ready':
    case 'resize': {
      const w = width(m.width);
      if (typeof w === 'string') return fail(`${type}.width: ${w}`);
      return { ok: true, message: { type, width: w } };
    }
    case 'zoom': {
      const w = width(m.width);
      if (typeof w === 'string') return fail(`zoom.width: ${w}`);
      const min = stepBound(m.min);
      if (typeof min === 'string') return fail(`zoom.min: ${min}`);
      const max = stepBound(m.max);
      if (typeof max === 'string') return fail(`zoom.max: ${max}`);
      if (min !== null && max !== null && min > max)
        return fail('zoom: min must not be above max (send nulls to reset)');
      return { ok: true, message: { type, min, max, width: w } };
    }
    case 'export': {
      const format = m.format;
      if (format !== 'csv' && format !== 'png') return fail('export.format: must be "csv" or "png"');
      const name = fileName(m.suggestedName, format);
      if (name.startsWith('!')) return fail(`export.suggestedName: ${name.slice(1)}`);
      if (typeof m.data !== 'string') return fail('export.data: must be a string');
      if (m.data.length > MAX_EXPORT_CHARS) return fail(`export.data: larger than ${MAX_EXPORT_CHARS} characters`);
      if (format === 'png' && !/^data:image\/png;base64,[A-Za-z0-9+/]*={0,2}$/.test(m.data))
        return fail('export.data: a PNG must be a data:image/png;base64 URL');
      return { ok: true, message: { type, format, suggestedName: name, data: m.data } };
    }
    default:
      return fail(
        typeof type === 'string' ? `unknown message type "${type.slice(0, 40)}"` : 'message.type must be a string',
      );
  }
}

function width(v: unknown): number | string {
  if (typeof v !== 'number' || !Number.isFinite(v)) return 'must be a finite number';
  if (v < MIN_WIDTH || v > MAX_WIDTH) return `must be between ${MIN_WIDTH} and ${MAX_WIDTH}`;
  return Math.round(v);
}

function stepBound(v: unknown): number | null | string {
  if (v === null) return null;
  if (typeof v !== 'number' || !Number.isFinite(v)) return 'must be a finite number or null';
  if (Math.abs(v) > MAX_STEP) return `must be within ±${MAX_STEP}`;
  return v;
}

/**
 * A plain file name (no folders, no control characters, no leading dot) ending in the format's
 * extension, which is added when missing; '!' + reason when it cannot be used.
 */
function fileName(v: unknown, format: 'csv' | 'png'): string {
  if (typeof v !== 'string' || v.trim() === '') return '!must be a non-empty string';
  if (v.length > MAX_NAME_CHARS) return `!longer than ${MAX_NAME_CHARS} characters`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f/\\:*?"<>|]/.test(v)) return '!must be a plain file name (no folders or special characters)';
  if (v.startsWith('.') || v.includes('..')) return '!must not start with a dot or contain ".."';
  return v.toLowerCase().endsWith(`.${format}`) ? v : `${v}.${format}`;
}

// ---- events.jsonl lines, at the browser dashboard's boundary ----------------------------------
// A run directory can hold anything. An event must have a sound envelope (else it is skipped);
// the fields of the known types that the dashboard reads are checked too, and a wrong-typed one is
// replaced by its "absent" value (null, [], {}), so that `"spec": null` or a `trace_tail` object
// can neither break the host's state machine nor the page's renderer. `repaired` names the first
// field replaced, for the run's problem report.

export const MAX_EVENT_TYPE_CHARS = 64;

export type CheckedEvent = { ok: true; event: RunEvent; repaired: string | null } | { ok: false; error: string };

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** Field rules per known type: `num` a finite number or null, `str` a string, `bool`, `obj` an object, `arr` an array. */
type Rule = 'num' | 'numOrNull' | 'str' | 'strOrNull' | 'bool' | 'obj' | 'objOrNull' | 'arr';
const RULES: Record<string, Record<string, Rule>> = {
  run_started: {
    run_id: 'str',
    spec: 'obj',
    classes: 'arr',
    total_steps: 'num',
    steps_per_epoch: 'num',
    global_batch: 'num',
    amp: 'objOrNull',
  },
  step: {
    epoch: 'num',
    step: 'num',
    first_step: 'numOrNull',
    mean_loss: 'numOrNull',
    loss: 'numOrNull',
    lr: 'numOrNull',
    loss_scale: 'numOrNull',
    overflow: 'bool',
    skipped: 'bool',
    step_ms: 'numOrNull',
    data_ms: 'numOrNull',
    img_per_s: 'numOrNull',
    train_acc: 'numOrNull',
  },
  eval: {
    epoch: 'num',
    step: 'num',
    val_loss: 'numOrNull',
    val_acc: 'numOrNull',
    val_top5: 'numOrNull',
    per_class_acc: 'arr',
  },
  checkpoint: { file: 'str', best: 'bool', metrics: 'objOrNull' },
  device: { devices: 'arr' },
  host: {
    cpu_pct: 'numOrNull',
    mem_used_mb: 'numOrNull',
    mem_total_mb: 'numOrNull',
    rss_mb: 'numOrNull',
    proc_cpu_pct: 'numOrNull',
  },
  warning: { code: 'str', message: 'str' },
  run_finished: { status: 'str', error: 'objOrNull', best: 'objOrNull', final: 'objOrNull' },
};
const ERROR_RULES: Record<string, Rule> = {
  kind: 'str',
  message: 'str',
  trace_tail: 'strOrNull',
  path: 'str',
  fix: 'str',
};

function fits(v: unknown, rule: Rule): boolean {
  switch (rule) {
    case 'num':
      return isNum(v);
    case 'numOrNull':
      return v === null || isNum(v);
    case 'str':
      return typeof v === 'string';
    case 'strOrNull':
      return v === null || typeof v === 'string';
    case 'bool':
      return typeof v === 'boolean';
    case 'obj':
      return isObj(v);
    case 'objOrNull':
      return v === null || isObj(v);
    case 'arr':
      return Array.isArray(v);
  }
}

function absent(rule: Rule): unknown {
  switch (rule) {
    case 'obj':
      return {};
    case 'arr':
      return [];
    case 'str':
      return '';
    case 'num':
    case 'bool':
      return undefined;
    default:
      return null;
  }
}

/** Copies `src` with each present field that breaks its rule replaced; returns the first field replaced. */
function repair(
  src: Record<string, unknown>,
  rules: Record<string, Rule>,
  prefix: string,
): [Record<string, unknown>, string | null] {
  let out = src;
  let first: string | null = null;
  for (const [field, rule] of Object.entries(rules)) {
    if (!(field in src) || fits(src[field], rule)) continue;
    if (out === src) out = { ...src };
    const a = absent(rule);
    if (a === undefined) delete out[field];
    else out[field] = a;
    first ??= `${prefix}${field}`;
  }
  return [out, first];
}

export function checkRunEvent(raw: unknown): CheckedEvent {
  if (!isObj(raw)) return { ok: false, error: `not an event object (${raw === null ? 'null' : typeof raw})` };
  const { v, seq, t, type } = raw;
  if (!Number.isInteger(v)) return { ok: false, error: 'v must be an integer' };
  if (!Number.isInteger(seq) || (seq as number) < 1) return { ok: false, error: 'seq must be an integer from 1' };
  if (!isNum(t)) return { ok: false, error: 't must be a finite number' };
  if (typeof type !== 'string' || type === '' || type.length > MAX_EVENT_TYPE_CHARS)
    return { ok: false, error: 'type must be a short non-empty string' };
  const rules = RULES[type];
  if (!rules) return { ok: true, event: raw as unknown as RunEvent, repaired: null };
  let [e, repaired] = repair(raw, rules, `${type}.`);
  if (type === 'run_finished' && isObj(e.error)) {
    const [err, r] = repair(e.error, ERROR_RULES, 'run_finished.error.');
    if (err !== e.error) {
      e = { ...e, error: err };
      repaired ??= r;
    }
  }
  if (type === 'device' && (e.devices as unknown[]).some((d) => !isObj(d))) {
    e = { ...e, devices: (e.devices as unknown[]).filter(isObj) };
    repaired ??= 'device.devices';
  }
  if (
    type === 'run_started' &&
    isObj(e.amp) &&
    (typeof e.amp.level !== 'string' || typeof e.amp.loss_scale !== 'string')
  ) {
    e = { ...e, amp: null };
    repaired ??= 'run_started.amp';
  }
  if (type === 'step' && !isNum(e.step)) return { ok: false, error: 'step.step must be a number' };
  if (type === 'step') {
    // a sink's counts: whole numbers from 0 to the steps it covers; any other value is dropped, and
    // the event's last-step flags stand in for it
    const size = stepsCovered(e);
    for (const field of ['overflows', 'skipped_updates']) {
      const n = e[field];
      if (n === undefined || (isNum(n) && Number.isInteger(n) && n >= 0 && n <= size)) continue;
      if (e === raw) e = { ...e };
      delete e[field];
      repaired ??= `step.${field}`;
    }
  }
  return { ok: true, event: e as unknown as RunEvent, repaired };
}

// ---- meta.json (the runner's `meta` command), at the dashboard's boundary ----------------------
// The user's name, notes and tags of a run, bounded as runner/ascend_finetune/meta.py writes them.
// A field of the wrong type (or too big) is refused with its name; the others still count, so a
// hand-edited meta.json with a bad `tags` keeps its name and notes.

export const MAX_META_NAME_CHARS = 200;
export const MAX_META_NOTES_BYTES = 10_000;
export const MAX_META_TAGS = 32;
export const MAX_META_TAG_CHARS = 64;

export interface CheckedRunMeta {
  name: string | null;
  notes: string;
  tags: string[];
  /** What was refused, naming the field and the fix (null: all sound). */
  problem: string | null;
}

export function checkRunMeta(raw: unknown): CheckedRunMeta {
  const out: CheckedRunMeta = { name: null, notes: '', tags: [], problem: null };
  if (!isObj(raw))
    return { ...out, problem: "meta.json: must be a JSON object (rewrite it with the runner's `meta` command)" };
  const problems: string[] = [];
  const fixIt = "set it with the runner's `meta` command";
  const { name, notes, tags } = raw;
  if (name !== undefined && name !== null) {
    if (typeof name !== 'string') problems.push(`meta.json: name must be a string; ${fixIt}`);
    else if (name.length > MAX_META_NAME_CHARS)
      problems.push(`meta.json: name is longer than ${MAX_META_NAME_CHARS} characters; ${fixIt}`);
    else out.name = name.trim() || null;
  }
  if (notes !== undefined && notes !== null) {
    if (typeof notes !== 'string') problems.push(`meta.json: notes must be a string; ${fixIt}`);
    else if (new TextEncoder().encode(notes).length > MAX_META_NOTES_BYTES)
      problems.push(`meta.json: notes are over ${MAX_META_NOTES_BYTES} bytes; ${fixIt}`);
    else out.notes = notes;
  }
  if (tags !== undefined && tags !== null) {
    if (!Array.isArray(tags) || !tags.every((t) => typeof t === 'string'))
      problems.push(`meta.json: tags must be a list of strings; ${fixIt}`);
    else if (tags.length > MAX_META_TAGS) problems.push(`meta.json: more than ${MAX_META_TAGS} tags; ${fixIt}`);
    else if (tags.some((t: string) => t.length > MAX_META_TAG_CHARS))
      problems.push(`meta.json: a tag is longer than ${MAX_META_TAG_CHARS} characters; ${fixIt}`);
    else out.tags = (tags as string[]).map((t) => t.trim()).filter(Boolean);
  }
  out.problem = problems.length ? problems.join('; ') : null;
  return out;
}
