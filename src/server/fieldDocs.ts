// Markdown about a field, from the schema: what it does, its default (the reference recipe's),
// what it accepts and, for an enum value, what that value does. Used by hover and completion.
import * as l10n from './l10n';
import { enumValues, fieldSchema, propertiesOf, rangeText, typesOf, type SchemaNode } from '../core/spec/fields';

export function acceptsText(rule: SchemaNode, only?: readonly string[]): string {
  const types = typesOf(rule);
  const nullable = types.includes('null') ? ', or null' : '';
  const values = enumValues(rule);
  if (values) {
    const names = `one of ${(only ?? values).map((v) => `\`${v}\``).join(', ')}`;
    const fields = rule.anyOf ? Object.keys(propertiesOf(rule) ?? {}) : [];
    return fields.length ? `${names}, or an object of ${fields.map((f) => `\`${f}\``).join(', ')}` : names;
  }
  if (types.includes('integer') || types.includes('number')) {
    const r = rangeText(rule);
    return `${types.includes('integer') ? 'a whole number' : 'a number'}${r ? ` ${r}` : ''}${nullable}`;
  }
  if (types.includes('boolean')) return '`true` or `false`';
  if (rule['x-path']) return `a path to a ${rule['x-path']} (relative to this file, \`~\` allowed)${nullable}`;
  if (types.includes('array')) return rule['x-expect'] ?? 'a list';
  if (types.includes('object')) return 'a section';
  return rule['x-expect'] ?? 'a string';
}

/**
 * The schema of a field by its path, into arrays too: `['model', 'unfreeze[0]', 'freeze']` (a
 * document node), `['model', 'unfreeze', '0', 'freeze']` (a JSON cursor) and
 * `['model', 'unfreeze', 'freeze']` (a YAML cursor in a list item) are a step's `freeze`.
 */
export function ruleAt(segs: readonly string[]): SchemaNode | undefined {
  let node = fieldSchema([]);
  for (const seg of segs) {
    const [, key, indexed] = /^(.*?)((?:\[\d+\])*)$/.exec(seg)!;
    if (/^\d+$/.test(key)) node = node?.items;
    else node = propertiesOf(node)?.[key] ?? node?.items?.properties?.[key];
    if (indexed) node = node?.items;
  }
  return node;
}

/** Only these enum values, and a line about why (a backbone's freeze stages). */
export interface EnumScope {
  values: readonly string[];
  note: string;
}

/** Hover/completion documentation of a field; with `value`, also what that enum value does. */
export function fieldMarkdown(segs: readonly string[], value?: unknown, scope?: EnumScope): string | undefined {
  const rule = ruleAt(segs);
  if (!rule) return undefined;
  const dotted = segs.join('.');
  const lines: string[] = [];
  const isSection = rule.type === 'object';
  // A field of an object value (model.preprocess's `mean`) may be left out: the preset's value stays.
  const inShape = !!ruleAt(segs.slice(0, -1))?.anyOf;
  const def =
    rule.default === undefined
      ? isSection
        ? undefined
        : inShape
          ? l10n.t('optional')
          : l10n.t('required')
      : l10n.t('default {0}', `\`${JSON.stringify(rule.default)}\``);
  lines.push(`**\`${dotted}\`**${def ? ` · ${def}` : ''}${isSection ? '' : ` · ${acceptsText(rule, scope?.values)}`}`);
  lines.push('', rule.markdownDescription ?? rule.description ?? '');
  const values = enumValues(rule);
  if (values && rule['x-enumDescriptions']) {
    const i = typeof value === 'string' ? values.indexOf(value) : -1;
    if (i >= 0) lines.push('', `**\`${value}\`**: ${rule['x-enumDescriptions'][i]}`);
    else
      lines.push(
        '',
        ...values.flatMap((v, j) =>
          !scope || scope.values.includes(v) ? [`- \`${v}\`: ${rule['x-enumDescriptions']![j]}`] : [],
        ),
      );
  }
  if (scope) lines.push('', scope.note);
  if (isSection)
    lines.push(
      '',
      l10n.t(
        'Fields: {0}',
        Object.keys(rule.properties ?? {})
          .map((k) => `\`${k}\``)
          .join(', '),
      ),
    );
  return lines.join('\n');
}
