// The run spec's rules, from the one JSON Schema the runner ships (runner/ascend_finetune/
// spec.schema.json): defaults, field docs, and validation with ajv that gives the same problems
// ({path, message, fix}) as the runner's `validate` (runner/ascend_finetune/spec.py). The shared
// examples in test/spec-examples run through both, so the two cannot drift.
import Ajv, { type ErrorObject } from 'ajv';
import { existsSync, statSync } from 'node:fs';
import {
  fieldSchema,
  isSection,
  pathFields,
  rangeText,
  resolveSpecPath,
  SPEC_SCHEMA,
  typesOf,
  type SchemaNode,
} from './fields';
import { closeMatch, pyDumps, pyNumber } from './py';
import { isNamedWeights } from './weightSources';

export * from './fields';

export interface SpecProblem {
  path: string;
  /** The runner's English words (the shared examples hold both sides to them). */
  message: string;
  fix: string;
  /** The same problem as a kind and its parameters, for wording it in another language (problemWords.ts). */
  words?: ProblemWords;
}

/**
 * What a problem says, without the English: `field` is its dotted path, `got` the value as the
 * runner prints it, `expect`/`fix` the schema's own x-expect/x-fix (translated by the schema table).
 */
export type ProblemWords =
  | { kind: 'not_a_spec'; fix: string }
  | { kind: 'unknown_field'; field: string; suggestion?: string; known: string[] }
  | { kind: 'not_an_object'; field: string; key: string; got: string }
  | { kind: 'null'; field: string; default: string }
  | { kind: 'unknown_value'; field: string; got: string; suggestion?: string; choices: string[] }
  | { kind: 'not_integer' | 'not_number' | 'not_boolean' | 'not_path'; field: string; got: string }
  | { kind: 'range'; field: string; low?: string; high?: string; got: string }
  | { kind: 'expected'; field: string; got: string; noun: 'value' | 'string' | 'list'; expect?: string; fix?: string }
  | { kind: 'required'; field: string; imageFolder: boolean }
  | { kind: 'path_missing'; field: string; what: 'file' | 'folder'; value: string; source?: boolean }
  | { kind: 'path_is_folder'; field: string; value: string };

const ajv = new Ajv({ allErrors: true, strictNumbers: true, strict: true, allowUnionTypes: true });
ajv.addVocabulary(['x-path', 'x-expect', 'x-fix', 'x-enumDescriptions', 'markdownDescription']);
const validate = ajv.compile(SPEC_SCHEMA);

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

export interface CheckOptions {
  /** Dotted paths whose number was written with a fraction or exponent (`2.0`): Python reads a float there. */
  floatPaths?: ReadonlySet<string>;
  /** The spec file's folder, against which relative paths are checked; with `checkFiles`. */
  baseDir?: string;
  /** Check that `data.*` folders and `model.pretrained` exist (on this machine). */
  checkFiles?: boolean;
}

/** Every problem in a spec, as the runner's `validate` reports them. */
export function checkSpec(raw: unknown, opts: CheckOptions = {}): SpecProblem[] {
  if (!isObject(raw))
    return [
      {
        path: '',
        message: 'a run spec must be a JSON object',
        fix: SPEC_SCHEMA['x-fix'] ?? '',
        words: { kind: 'not_a_spec', fix: SPEC_SCHEMA['x-fix'] ?? '' },
      },
    ];
  const floats = opts.floatPaths ?? new Set<string>();
  validate(raw);
  // ajv says which fields fail; the message is worded from the field's rule, as the runner words it.
  const failing = new Set<string>();
  const problems: SpecProblem[] = [];
  for (const e of (validate.errors ?? []) as ErrorObject[]) {
    const segs = e.instancePath
      .split('/')
      .slice(1)
      .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    // An object inside a field (model.unfreeze's steps) is the field's problem, worded as the runner words it.
    if ((e.keyword === 'additionalProperties' || e.keyword === 'required') && fieldOf(segs).length < segs.length) {
      failing.add(fieldOf(segs).join('.'));
      continue;
    }
    if (e.keyword === 'additionalProperties' && isSection(fieldSchema(segs))) {
      const key = String((e.params as { additionalProperty: string }).additionalProperty);
      const known = Object.keys(fieldSchema(segs)?.properties ?? {});
      problems.push(unknownField([...segs, key].join('.'), key, known));
      continue;
    }
    if (e.keyword === 'required' && isSection(fieldSchema(segs))) continue; // below, as the runner does it (null and "" count as missing)
    failing.add(fieldOf(segs).join('.'));
  }
  // What JSON.parse cannot tell ajv: `2.0` is a float to the runner.
  for (const p of floats)
    if (typeof valueAt(raw, p.split('.')) === 'number' && typesOf(fieldSchema(p.split('.')) ?? {}).includes('integer'))
      failing.add(p);
  for (const dotted of failing) {
    const segs = dotted.split('.');
    const rule = fieldSchema(segs);
    const parent = fieldSchema(segs.slice(0, -1));
    const value = valueAt(raw, segs);
    if (!rule || !parent) continue;
    const key = segs[segs.length - 1];
    const required = parent.required?.includes(key) ?? false;
    if (isSection(rule)) {
      if (!(value === null && required))
        problems.push({
          path: dotted,
          message: `must be an object, got ${pyDumps(value)}`,
          fix: `write "${key}": {...}`,
          words: { kind: 'not_an_object', field: dotted, key, got: pyDumps(value) },
        });
      continue;
    }
    if (required && (value === null || value === '')) continue;
    if (rule.anyOf && value !== null) {
      problems.push(...shapeProblems(dotted, value, rule, floats));
      continue;
    }
    if (value === null) {
      if (!typesOf(rule).includes('null'))
        problems.push({
          path: dotted,
          message: 'must not be null',
          fix: `remove ${dotted} to use the default (${pyDumps(rule.default ?? null)})`,
          words: { kind: 'null', field: dotted, default: pyDumps(rule.default ?? null) },
        });
      continue;
    }
    const p = describe(dotted, value, rule, floats.has(dotted));
    if (p) problems.push(p);
  }
  problems.push(...missing(raw, SPEC_SCHEMA, []));
  const bad = new Set(problems.map((p) => p.path));
  if (opts.checkFiles) problems.push(...fileProblems(raw, opts.baseDir ?? '.', bad));
  problems.push(...runnerLimits(raw, bad));
  return sortLikeRunner(problems, raw);
}

/** The field a failing instance path belongs to: a section's field, not an item of its array. */
function fieldOf(segs: string[]): string[] {
  const out: string[] = [];
  let node: SchemaNode | undefined = SPEC_SCHEMA;
  for (const s of segs) {
    if (!isSection(node)) break;
    out.push(s);
    node = node?.properties?.[s];
  }
  return out;
}

function valueAt(raw: unknown, segs: string[]): unknown {
  let v: unknown = raw;
  for (const s of segs) v = isObject(v) ? v[s] : undefined;
  return v;
}

function unknownField(path: string, key: string, choices: string[]): SpecProblem {
  const close = closeMatch(key, choices, 0.6);
  return {
    path,
    message: 'unknown field',
    fix: close !== undefined ? `did you mean "${close}"?` : `known fields: ${choices.join(', ')}`,
    words: { kind: 'unknown_field', field: path, suggestion: close, known: choices },
  };
}

const branchChecks = new Map<SchemaNode, ReturnType<typeof ajv.compile>>();

/** ajv's verdict on one value against one rule (compiled once per rule). */
function fits(value: unknown, rule: SchemaNode): boolean {
  let check = branchChecks.get(rule);
  if (!check) branchChecks.set(rule, (check = ajv.compile(rule)));
  return check(value) as boolean;
}

/**
 * A field of several shapes (`model.preprocess`: a preset name or an object of fields), as spec.py's
 * `_check_shapes` words it: the branch of the value's type, an object's fields each by its own path.
 */
function shapeProblems(dotted: string, value: unknown, rule: SchemaNode, floats: ReadonlySet<string>): SpecProblem[] {
  const object = rule.anyOf!.find((b) => typesOf(b).includes('object'));
  const text = rule.anyOf!.find((b) => typesOf(b).includes('string'));
  if (object && isObject(value)) {
    const props = object.properties ?? {};
    const out: SpecProblem[] = [];
    for (const [k, v] of Object.entries(value)) {
      const path = `${dotted}.${k}`;
      const sub = props[k];
      if (!sub) out.push(unknownField(path, k, Object.keys(props)));
      else if (v === null)
        out.push({
          path,
          message: 'must not be null',
          fix: `remove ${path} to use the default (${pyDumps(sub.default ?? null)})`,
          words: { kind: 'null', field: path, default: pyDumps(sub.default ?? null) },
        });
      else if (!fits(v, sub) || (floats.has(path) && typesOf(sub).includes('integer'))) {
        const p = describe(path, v, sub, floats.has(path));
        if (p) out.push(p);
      }
    }
    return out;
  }
  if (text && typeof value === 'string') {
    const p = fits(value, text) ? undefined : describe(dotted, value, text, false);
    return p ? [p] : [];
  }
  const got = pyDumps(value, floats.has(dotted));
  return [
    {
      path: dotted,
      message: `must be ${rule['x-expect'] ?? 'a value'}, got ${got}`,
      fix: rule['x-fix'] ?? '',
      words: { kind: 'expected', field: dotted, got, noun: 'value', expect: rule['x-expect'], fix: rule['x-fix'] },
    },
  ];
}

/** One failing field's problem, worded as spec.py's `_check_value` words it. */
function describe(dotted: string, value: unknown, rule: SchemaNode, isFloat: boolean): SpecProblem | undefined {
  const types = typesOf(rule);
  const got = pyDumps(value, isFloat);
  if (rule.enum) {
    const hint = closeMatch(pyStr(value, isFloat), rule.enum, 0.5);
    return {
      path: dotted,
      message: `unknown value ${got}`,
      fix: `${hint !== undefined ? `did you mean "${hint}"? ` : ''}one of: ${rule.enum.join(', ')}`,
      words: { kind: 'unknown_value', field: dotted, got, suggestion: hint, choices: rule.enum },
    };
  }
  if (types.includes('integer') || types.includes('number')) {
    const integer = types.includes('integer');
    if (typeof value !== 'number' || !Number.isFinite(value) || (integer && (isFloat || !Number.isInteger(value)))) {
      return {
        path: dotted,
        message: `must be ${integer ? 'an integer' : 'a number'}, got ${got}`,
        fix: `set ${dotted} to ${integer ? 'a whole number' : 'a number'}`,
        words: { kind: integer ? 'not_integer' : 'not_number', field: dotted, got },
      };
    }
    const rng = rangeText(rule);
    // each bound with its operator (`> 0.0`, `<= 100.0`), for a sentence that orders them itself
    const bounds = rangeText(rule, (l, h) => `${l}\n${h}`).split('\n');
    const n = pyNumber(value, isFloat);
    return {
      path: dotted,
      message: `must be ${rng}, got ${n}`,
      fix: `set ${dotted} to a value ${rng}`,
      words: {
        kind: 'range',
        field: dotted,
        low: bounds.find((x) => x.startsWith('>')),
        high: bounds.find((x) => x.startsWith('<')),
        got: n,
      },
    };
  }
  if (types.includes('boolean'))
    return {
      path: dotted,
      message: `must be true or false, got ${got}`,
      fix: `set ${dotted} to true or false`,
      words: { kind: 'not_boolean', field: dotted, got },
    };
  if (types.includes('string')) {
    if (rule['x-path'])
      return {
        path: dotted,
        message: `must be a path, got ${got}`,
        fix: `set ${dotted} to a path on the target`,
        words: { kind: 'not_path', field: dotted, got },
      };
    return {
      path: dotted,
      message: `must be ${rule['x-expect'] ?? 'a string'}, got ${got}`,
      fix: rule['x-fix'] ?? `set ${dotted} to a string`,
      words: { kind: 'expected', field: dotted, got, noun: 'string', expect: rule['x-expect'], fix: rule['x-fix'] },
    };
  }
  if (types.includes('array'))
    return {
      path: dotted,
      message: `must be ${rule['x-expect'] ?? 'a list'}, got ${got}`,
      fix: rule['x-fix'] ?? '',
      words: { kind: 'expected', field: dotted, got, noun: 'list', expect: rule['x-expect'], fix: rule['x-fix'] },
    };
  return undefined;
}

/** Python's `str()` of a JSON value, for the "did you mean" of an enum. */
function pyStr(v: unknown, isFloat: boolean): string {
  if (typeof v === 'string') return v;
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (v === null) return 'None';
  return pyDumps(v, isFloat);
}

/** Required fields that are absent, null or empty; a required section names its required fields. */
function missing(obj: Record<string, unknown>, rule: SchemaNode, prefix: string[]): SpecProblem[] {
  const out: SpecProblem[] = [];
  for (const key of rule.required ?? []) {
    const v = obj[key];
    if (v !== undefined && v !== null && v !== '') {
      if (isObject(v) && isSection(rule.properties?.[key]))
        out.push(...missing(v, rule.properties![key], [...prefix, key]));
      continue;
    }
    out.push(...missingField([...prefix, key], rule.properties![key]));
  }
  return out;
}

function missingField(segs: string[], rule: SchemaNode): SpecProblem[] {
  if (isSection(rule) && rule.required?.length)
    return rule.required.flatMap((k) => missingField([...segs, k], rule.properties![k]));
  const dotted = segs.join('.');
  const fix =
    dotted === 'data.train' ? 'set data.train to an ImageFolder root (one folder per class)' : `set ${dotted}`;
  return [
    {
      path: dotted,
      message: 'is required',
      fix,
      words: { kind: 'required', field: dotted, imageFolder: dotted === 'data.train' },
    },
  ];
}

function fileProblems(raw: Record<string, unknown>, baseDir: string, bad: Set<string>): SpecProblem[] {
  const out: SpecProblem[] = [];
  for (const { path: dotted, kind } of pathFields()) {
    const v = valueAt(raw, dotted.split('.'));
    if (typeof v !== 'string' || v === '' || bad.has(dotted)) continue;
    if (dotted === 'model.pretrained' && isNamedWeights(v)) continue; // fetched by the runner
    const full = resolveSpecPath(v, baseDir);
    const isDir = existsSync(full) && statSync(full).isDirectory();
    if (kind === 'file' && isDir) out.push(pathIsFolder(dotted, v));
    else if (!(kind === 'folder' ? isDir : existsSync(full) && statSync(full).isFile()))
      out.push(pathMissing(dotted, kind, v));
  }
  return out;
}

/** A model.pretrained that reads like a named source with a mistyped prefix (mindvc:, hf_hub:): two
 * characters at least, so a Windows drive (C:) is a path. The runner's spec.py SOURCE_LIKE. */
const SOURCE_LIKE = /^[A-Za-z][A-Za-z0-9_.-]+:/;

/** A path field's file or folder is missing: the runner's words, which problemWords.ts reads back. */
export function pathMissing(dotted: string, kind: 'file' | 'folder', v: string): SpecProblem {
  const source = dotted === 'model.pretrained' && SOURCE_LIKE.test(v);
  const named = source ? ', or name weights to download as mindcv:<model> or hf-hub:<org>/<repo>' : '';
  return {
    path: dotted,
    message: `${kind} not found: ${v}`,
    fix: `point ${dotted} at an existing ${kind} on the target${named}`,
    words: { kind: 'path_missing', field: dotted, what: kind, value: v, ...(source ? { source } : {}) },
  };
}

/** A file field (model.pretrained) names a folder: the runner's words, read back as pathMissing's. */
export function pathIsFolder(dotted: string, v: string): SpecProblem {
  return {
    path: dotted,
    message: `is a folder, not a file: ${v}`,
    fix: `point ${dotted} at a file in it (a .ckpt, .safetensors, .pth, .pt or .bin file), not the folder`,
    words: { kind: 'path_is_folder', field: dotted, value: v },
  };
}

/** Limits of this runner version that the schema does not express: none since msrun (kept as the
 * place for the next one, so the runner and the editor stay in step). */
export function runnerLimits(_raw: Record<string, unknown>, _bad: Set<string> = new Set()): SpecProblem[] {
  return [];
}

/** The runner's order: fields in the file's order, then missing fields, files, limits. */
function sortLikeRunner(problems: SpecProblem[], raw: Record<string, unknown>): SpecProblem[] {
  const order = new Map<string, number>();
  let i = 0;
  // Depth first, as the runner walks the spec (a field of a field: model.preprocess.mean).
  const walk = (obj: Record<string, unknown>, prefix: string): void => {
    for (const [k, v] of Object.entries(obj)) {
      order.set(prefix + k, i++);
      if (isObject(v) && prefix.split('.').length < 4) walk(v, `${prefix}${k}.`);
    }
  };
  walk(raw, '');
  const rank = (p: SpecProblem) =>
    p.message === 'is required' || / not found: /.test(p.message) || p.message.startsWith('more than one device')
      ? Infinity
      : (order.get(p.path) ?? Infinity);
  return problems
    .map((p, idx) => ({ p, idx }))
    .sort((a, b) => rank(a.p) - rank(b.p) || a.idx - b.idx)
    .map((x) => x.p);
}
