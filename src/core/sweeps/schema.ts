// The sweep spec's JSON Schema (runner/ascend_finetune/sweep.schema.json), for the language server's
// completion, hover and diagnostics of `*.ascend-sweep.yaml` files, and the run-spec fields a
// `space` key may name.
import { SPEC_SCHEMA, type SchemaNode } from '../spec/fields';

// A require, as fields.ts does for the run spec's schema (esbuild bundles the JSON; tests read it in place).
// eslint-disable-next-line @typescript-eslint/no-require-imports -- see above
export const SWEEP_SCHEMA: SchemaNode = require('../../../runner/ascend_finetune/sweep.schema.json');

/** `*.ascend-sweep.yaml` / `.yml` / `.json`. */
export const isSweepFile = (name: string) => /\.ascend-sweep\.(ya?ml|json)$/i.test(name);

/** The sweep's own fields, which a space may not set (the runner refuses them too). */
const NOT_SWEPT = new Set(['name', 'device.ids', 'device.nodes']);

/** Every run-spec field a `space` key may name (dotted, leaves only), with its schema. */
export function sweepableFields(): { path: string; rule: SchemaNode }[] {
  const out: { path: string; rule: SchemaNode }[] = [];
  const walk = (rule: SchemaNode, prefix: string) => {
    for (const [k, sub] of Object.entries(rule.properties ?? {})) {
      const p = prefix ? `${prefix}.${k}` : k;
      if (sub.type === 'object' && sub.properties) walk(sub, p);
      else if (!NOT_SWEPT.has(p)) out.push({ path: p, rule: sub });
    }
  };
  walk(SPEC_SCHEMA, '');
  return out;
}

/** The sweep schema's node for a path of the sweep file (`['space', 'train.lr', 'low']`). */
export function sweepFieldSchema(segments: readonly string[]): SchemaNode | undefined {
  let node: SchemaNode | undefined = SWEEP_SCHEMA;
  for (const s of segments) {
    const n: SchemaNode | undefined = node;
    const extra: unknown = (n as { additionalProperties?: unknown } | undefined)?.additionalProperties;
    node = n?.properties?.[s] ?? (typeof extra === 'object' && extra !== null ? (extra as SchemaNode) : undefined);
  }
  return node;
}
