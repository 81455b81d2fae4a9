// Writes run-spec files: a commented YAML spec (each section and field with a line about what it
// does, from the schema) or plain JSON. "New Run Spec" writes every field with the reference
// recipe's defaults; the Start wizard's "save as a spec file" writes its choices the same way.
import { fieldSchema, specDefaults, SPEC_SCHEMA } from './fields';

export type SpecFormat = 'yaml' | 'json';

export function formatOf(fileName: string): SpecFormat {
  return /\.ya?ml$/i.test(fileName) ? 'yaml' : 'json';
}

/** A YAML scalar: plain when it reads back as the same string, else double-quoted. */
export function yamlScalar(v: string): string {
  const plain =
    /^[A-Za-z0-9_./~][A-Za-z0-9_./~:+-]*$/.test(v) &&
    !/^(true|false|null|yes|no|on|off|~|[-+]?(\d|\.\d)|\.(inf|nan))/i.test(v) &&
    !/:$/.test(v);
  return plain ? v : JSON.stringify(v);
}

function yamlValue(v: unknown): string {
  if (typeof v === 'string') return yamlScalar(v);
  if (Array.isArray(v)) return `[${v.map(yamlValue).join(', ')}]`;
  return JSON.stringify(v ?? null);
}

/**
 * The first sentence of a field's description, without markdown, for a comment: always whole
 * (never cut with "..."), and a long one is wrapped over several comment lines.
 */
export function gist(description: string | undefined, width = 110): string[] {
  const first = (description ?? '')
    .split(/(?<=\.)\s/)[0]
    .replace(/\*\*|`/g, '')
    .trim();
  if (first === '') return [];
  const lines: string[] = [];
  let line = '';
  for (const word of first.split(/\s+/)) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(line);
  return lines;
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/**
 * A spec as file text. YAML gets a comment above each field; JSON (no comments) is the object as
 * it is. With `allFields`, every field of the schema is written, defaults filling what `spec` lacks.
 */
export function writeSpec(
  spec: Record<string, unknown>,
  format: SpecFormat,
  opts: { allFields?: boolean; header?: string } = {},
): string {
  const full: Record<string, unknown> = opts.allFields ? mergeDeep(specDefaults(), spec) : spec;
  if (format === 'json') return JSON.stringify(full, null, 2) + '\n';
  const lines: string[] = [];
  for (const h of (opts.header ?? '').split('\n').filter(Boolean)) lines.push(`# ${h}`);
  const order = Object.keys(SPEC_SCHEMA.properties ?? {});
  const keys = [...order.filter((k) => k in full), ...Object.keys(full).filter((k) => !order.includes(k))];
  for (const key of keys) {
    const rule = fieldSchema([key]);
    const value = full[key];
    if (lines.length) lines.push('');
    for (const g of gist(rule?.description)) lines.push(`# ${g}`);
    if (!isObject(value)) {
      lines.push(`${key}: ${yamlValue(value)}`);
      continue;
    }
    lines.push(`${key}:`);
    const subOrder = Object.keys(rule?.properties ?? {});
    const subKeys = [...subOrder.filter((k) => k in value), ...Object.keys(value).filter((k) => !subOrder.includes(k))];
    for (const sub of subKeys) {
      const subRule = fieldSchema([key, sub]);
      for (const g of gist(subRule?.description)) lines.push(`  # ${g}`);
      const inner = value[sub];
      if (!isObject(inner) || Object.keys(inner).length === 0) {
        lines.push(`  ${sub}: ${yamlValue(inner)}`);
        continue;
      }
      // A field that is itself an object (train.early_stopping, train.plateau): its fields one level in.
      lines.push(`  ${sub}:`);
      for (const [f, fv] of Object.entries(inner)) {
        for (const g of gist(fieldSchema([key, sub, f])?.description)) lines.push(`    # ${g}`);
        lines.push(`    ${f}: ${yamlValue(fv)}`);
      }
    }
  }
  return lines.join('\n') + '\n';
}

function mergeDeep(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over))
    out[k] = isObject(v) && isObject(out[k]) ? { ...(out[k] as Record<string, unknown>), ...v } : v;
  return out;
}

/** The text "New Run Spec" writes: every field, the recipe's defaults, a name and a data folder to fill in. */
export function newSpecText(name: string, format: SpecFormat, dataTrain = 'data/train'): string {
  return writeSpec({ name, data: { train: dataTrain } }, format, {
    allFields: true,
    header:
      'An Ascend Fine-Tune run spec: the reference recipe (pretrained ResNet-50, frozen backbone, new head,\nO2 mixed precision with dynamic loss scaling, Momentum, checkpoints). Hover a field for what it does.\nPaths are relative to this file. Start it with the "Start fine-tune" lens above.',
  });
}
