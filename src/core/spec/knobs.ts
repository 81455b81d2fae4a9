// The fine-tuning knobs the full Start wizard's "Training options" step offers (issue 19): each one
// a spec field by its dotted path, its choices or range read from the runner's schema, so the
// wizard refuses what `validate` would. A knob at its schema default is not written to the spec.
import { english, type Translate } from '../l10n';
import { enumOf, fieldSchema, rangeText, specDefault, typesOf, type SchemaNode } from './fields';

export type KnobValue = string | number;
/** Chosen knobs by dotted spec path (`data.augment`, `train.early_stopping.patience`). */
export type Knobs = Record<string, KnobValue>;

export interface Knob {
  path: string;
  /** What the knob is, in the user's words (`t` is vscode.l10n.t in the glue). */
  label: (t: Translate) => string;
  /** `enum`: one of the schema's values; `number`: typed, in the schema's range; `auto`: off or "auto". */
  kind: 'enum' | 'number' | 'auto';
}

export const KNOBS: readonly Knob[] = [
  { path: 'data.augment', label: (t) => t('Augmentation preset'), kind: 'enum' },
  { path: 'data.mixup', label: (t) => t('Mixup alpha'), kind: 'number' },
  { path: 'data.cutmix', label: (t) => t('CutMix alpha'), kind: 'number' },
  { path: 'train.label_smoothing', label: (t) => t('Label smoothing'), kind: 'number' },
  { path: 'train.early_stopping.patience', label: (t) => t('Early stopping (patience, epochs)'), kind: 'number' },
  { path: 'train.early_stopping.metric', label: (t) => t('Early stopping metric'), kind: 'enum' },
  { path: 'train.lr_schedule', label: (t) => t('Learning-rate schedule (plateau: reduce on plateau)'), kind: 'enum' },
  { path: 'train.plateau.patience', label: (t) => t('Plateau patience (epochs)'), kind: 'number' },
  { path: 'train.ema', label: (t) => t('EMA of weights (decay)'), kind: 'number' },
  { path: 'train.backbone_lr_mult', label: (t) => t('Backbone lr multiplier'), kind: 'number' },
  { path: 'train.accumulate_steps', label: (t) => t('Gradient accumulation (batches per update)'), kind: 'number' },
  { path: 'data.sampling', label: (t) => t('Sampling (balanced for imbalanced classes)'), kind: 'enum' },
  { path: 'train.class_weights', label: (t) => t('Class weights in the loss'), kind: 'auto' },
];

function ruleOf(path: string): SchemaNode {
  const rule = fieldSchema(path.split('.'));
  if (!rule) throw new Error(`knob ${path} is not in the spec schema`);
  return rule;
}

/** The schema default of a knob (`null` where there is none, e.g. `train.ema`). */
export function knobDefault(path: string): KnobValue | null {
  return (specDefault(path) ?? null) as KnobValue | null;
}

/** The values an enum knob offers, the schema's default first. */
export function knobChoices(path: string): string[] {
  const def = knobDefault(path);
  const all = ruleOf(path).enum ? enumOf(path) : ['auto'];
  return typeof def === 'string' ? [def, ...all.filter((v) => v !== def)] : all;
}

/** The value as shown in the step's list: the default says so. */
export function knobText(path: string, knobs: Knobs): string {
  const v = path in knobs ? knobs[path] : knobDefault(path);
  const shown = v === null ? 'off' : String(v);
  return path in knobs ? shown : `${shown} (default)`;
}

/**
 * A typed number for a knob, or the reason it is refused, worded from the field's schema rule.
 * An empty box on a nullable field (`train.ema`) turns the knob off (`null`).
 */
export function parseKnobNumber(
  path: string,
  text: string,
  t: Translate = english,
): { value: number | null } | { error: string } {
  const rule = ruleOf(path);
  const types = typesOf(rule);
  const name = path; // the field path, as written in specs
  const typed = text.trim();
  if (typed === '' && types.includes('null')) return { value: null };
  const value = typed === '' ? NaN : Number(typed);
  if (!Number.isFinite(value))
    return {
      error: types.includes('null') ? t('{0} must be a number (empty: off)', name) : t('{0} must be a number', name),
    };
  if (types.includes('integer') && !Number.isInteger(value)) return { error: t('{0} must be a whole number', name) };
  const lowOk =
    rule.exclusiveMinimum !== undefined
      ? value > rule.exclusiveMinimum
      : rule.minimum === undefined || value >= rule.minimum;
  if (!lowOk || (rule.maximum !== undefined && value > rule.maximum))
    return {
      error: t(
        '{0} must be {1}',
        name,
        rangeText(rule, (low, high) => t('{0} and {1}', low, high)),
      ),
    };
  return { value };
}

/** Sets a knob; its default (or null) removes it, so the written spec leaves it out. */
export function setKnob(knobs: Knobs, path: string, value: KnobValue | null): void {
  if (value === null || value === knobDefault(path)) delete knobs[path];
  else knobs[path] = value;
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** The spec's own knob values (a spec file's), those the wizard can show: valid and not the default. */
export function knobsFromSpec(spec: unknown): Knobs {
  const out: Knobs = {};
  for (const k of KNOBS) {
    let v: unknown = spec;
    for (const seg of k.path.split('.')) v = isObject(v) ? v[seg] : undefined;
    if (typeof v === 'number' && k.kind === 'number') {
      const p = parseKnobNumber(k.path, String(v));
      if ('value' in p && p.value !== null) setKnob(out, k.path, p.value);
    } else if (typeof v === 'string' && knobChoices(k.path).includes(v)) setKnob(out, k.path, v);
  }
  return out;
}

/** The knobs as spec sections to lay over the built spec: `{train: {early_stopping: {patience: 3}}}`. */
export function knobSections(knobs: Knobs): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const k of KNOBS) {
    if (!(k.path in knobs)) continue;
    const [sec, ...rest] = k.path.split('.');
    let node: Record<string, unknown> = (out[sec] ??= {});
    for (const seg of rest.slice(0, -1)) node = (node[seg] ??= {}) as Record<string, unknown>;
    node[rest[rest.length - 1]] = knobs[k.path];
  }
  return out;
}

/**
 * A spec file's knob fields brought in line with the wizard's: a knob the wizard left at its
 * default is removed from the file's spec (the user may have reset it), nested sections merged.
 */
export function applyKnobs(spec: Record<string, unknown>, knobs: Knobs): Record<string, unknown> {
  const out = structuredClone(spec);
  for (const k of KNOBS) {
    const segs = k.path.split('.');
    let node: unknown = out;
    for (const seg of segs.slice(0, -1)) {
      if (!isObject(node)) break;
      if (k.path in knobs && !isObject(node[seg])) node[seg] = {};
      node = node[seg];
    }
    if (!isObject(node)) continue;
    const last = segs[segs.length - 1];
    if (k.path in knobs) node[last] = knobs[k.path];
    else delete node[last];
  }
  return out;
}
