// The run spec's schema, as data: field rules, defaults (the reference recipe's), enums, ranges
// and docs, from the one JSON Schema the runner ships (runner/ascend_finetune/spec.schema.json).
// No validator here (that is schema.ts, with ajv), so the wizard and the spec writer stay small.
import * as os from 'node:os';
import * as path from 'node:path';
import { pyNumber } from './py';

/** The subset of JSON Schema the spec uses, plus its `x-` annotations. */
export interface SchemaNode {
  type?: string | string[];
  description?: string;
  /** The hover text: when to use the field and its default (falls back to `description`). */
  markdownDescription?: string;
  default?: unknown;
  enum?: string[];
  'x-enumDescriptions'?: string[];
  properties?: Record<string, SchemaNode>;
  /** A field of several shapes (`model.preprocess`: a preset name or an object of fields). */
  anyOf?: SchemaNode[];
  required?: string[];
  additionalProperties?: boolean;
  items?: SchemaNode;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minLength?: number;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  pattern?: string;
  /** `folder` or `file`: a path that must exist on the target. */
  'x-path'?: 'folder' | 'file';
  /** What a value must be, for messages ("a list of distinct device numbers"). */
  'x-expect'?: string;
  'x-fix'?: string;
}

// esbuild bundles the JSON into the extension and the server; tests read it in place. A require, not
// an import: node16 module resolution would need an import attribute that esbuild and tsx treat apart.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- see above
export const SPEC_SCHEMA: SchemaNode = require('../../../runner/ascend_finetune/spec.schema.json');

export function typesOf(rule: SchemaNode): string[] {
  return rule.type === undefined ? [] : Array.isArray(rule.type) ? rule.type : [rule.type];
}

export function isSection(rule: SchemaNode | undefined): boolean {
  return !!rule && rule.type === 'object' && !!rule.properties;
}

/** The fields of a rule: a section's, or those of a field's object shape (`model.preprocess`'s). */
export function propertiesOf(rule: SchemaNode | undefined): Record<string, SchemaNode> | undefined {
  return rule?.properties ?? rule?.anyOf?.find((b) => b.properties)?.properties;
}

/** The schema of a field by its path (`['model', 'freeze']`, `['model', 'preprocess', 'mean']`), or
 * undefined for an unknown one. */
export function fieldSchema(segments: readonly string[]): SchemaNode | undefined {
  let node: SchemaNode | undefined = SPEC_SCHEMA;
  for (const s of segments) node = propertiesOf(node)?.[s];
  return node;
}

/** Every default, section by section: the reference recipe's (the runner's DEFAULTS). */
export function specDefaults(): Record<string, unknown> {
  const of = (rule: SchemaNode): Record<string, unknown> =>
    Object.fromEntries(
      Object.entries(rule.properties ?? {}).map(([k, sub]) => [
        k,
        isSection(sub) ? of(sub) : structuredClone(sub.default ?? null),
      ]),
    );
  return of(SPEC_SCHEMA);
}

/** The default of one field, e.g. `specDefault('amp.level')` is `"O2"`. */
export function specDefault(dotted: string): unknown {
  return fieldSchema(dotted.split('.'))?.default;
}

/** A rule's string values: its enum, or its string branch's (`model.preprocess`'s presets). */
export function enumValues(rule: SchemaNode | undefined): string[] | undefined {
  return rule?.enum ?? rule?.anyOf?.find((b) => b.enum)?.enum;
}

/** A field's enum values, e.g. `enumOf('model.backbone')`. */
export function enumOf(dotted: string): string[] {
  return enumValues(fieldSchema(dotted.split('.'))) ?? [];
}

/** `>= 1`, `> 0.0 and <= 100.0`: a number field's range, its bounds printed as Python prints them. */
export function rangeText(
  rule: SchemaNode,
  both: (low: string, high: string) => string = (low, high) => `${low} and ${high}`,
): string {
  const isFloat = !typesOf(rule).includes('integer');
  const exclusive = rule.exclusiveMinimum !== undefined;
  const lo = rule.exclusiveMinimum ?? rule.minimum;
  const hi = rule.maximum;
  const low = lo !== undefined ? `${exclusive ? '>' : '>='} ${pyNumber(lo, isFloat)}` : '';
  const high = hi !== undefined ? `<= ${pyNumber(hi, isFloat)}` : '';
  return low && high ? both(low, high) : low || high;
}

/** The `x-path` fields: dotted path and kind (`data.train`: folder, `model.pretrained`: file). */
export function pathFields(): { path: string; kind: 'folder' | 'file' }[] {
  const out: { path: string; kind: 'folder' | 'file' }[] = [];
  for (const [sec, s] of Object.entries(SPEC_SCHEMA.properties ?? {})) {
    for (const [k, f] of Object.entries(s.properties ?? {}))
      if (f['x-path']) out.push({ path: `${sec}.${k}`, kind: f['x-path'] });
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : 1));
}

/** A spec path as the runner opens it: relative to the spec's folder, `~` expanded. */
export function resolveSpecPath(p: string, baseDir: string): string {
  const expanded = p === '~' || p.startsWith('~/') ? path.join(os.homedir(), p.slice(1)) : p;
  return path.resolve(baseDir, expanded);
}
