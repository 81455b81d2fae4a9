// Markdown about a field, from the schema: what it does, its default (the reference recipe's),
// what it accepts and, for an enum value, what that value does. Used by hover and completion.
import { joined } from '../shared/l10n';
import * as l10n from './l10n';
import { enumValues, fieldSchema, propertiesOf, rangeText, typesOf, type SchemaNode } from '../core/spec/fields';

/** What a field accepts, in the client's language (`one of \`a\`, \`b\``, `a whole number >= 1, or null`). */
export function acceptsText(rule: SchemaNode, only?: readonly string[]): string {
  const types = typesOf(rule);
  const orNull = (text: string) => (types.includes('null') ? l10n.t('{0}, or null', text) : text);
  const values = enumValues(rule);
  if (values) {
    const names = l10n.t(
      'one of {0}',
      joined(
        (only ?? values).map((v) => `\`${v}\``),
        l10n.t,
      ),
    );
    const fields = rule.anyOf ? Object.keys(propertiesOf(rule) ?? {}) : [];
    return fields.length
      ? l10n.t(
          '{0}, or an object of {1}',
          names,
          joined(
            fields.map((f) => `\`${f}\``),
            l10n.t,
          ),
        )
      : names;
  }
  if (types.includes('integer') || types.includes('number')) {
    // The joining word is translated; the bounds stay as written (`>= 1`).
    const r = rangeText(rule, (low, high) => l10n.t('{0} and {1}', low, high));
    const integer = types.includes('integer');
    if (!r) return orNull(integer ? l10n.t('a whole number') : l10n.t('a number'));
    return orNull(integer ? l10n.t('a whole number {0}', r) : l10n.t('a number {0}', r));
  }
  if (types.includes('boolean')) return l10n.t('`true` or `false`');
  if (rule['x-path'])
    return orNull(
      rule['x-path'] === 'folder'
        ? l10n.t('a path to a folder (relative to this file, `~` allowed)')
        : l10n.t('a path to a file (relative to this file, `~` allowed)'),
    );
  if (types.includes('array')) return l10n.schemaText(rule['x-expect']) ?? l10n.t('a list');
  if (types.includes('object')) return l10n.t('a section');
  return l10n.schemaText(rule['x-expect']) ?? l10n.t('a string');
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
  lines.push('', l10n.schemaText(rule.markdownDescription ?? rule.description ?? ''));
  const values = enumValues(rule);
  if (values && rule['x-enumDescriptions']) {
    const i = typeof value === 'string' ? values.indexOf(value) : -1;
    if (i >= 0) lines.push('', `**\`${value}\`**: ${l10n.schemaText(rule['x-enumDescriptions'][i])}`);
    else
      lines.push(
        '',
        ...values.flatMap((v, j) =>
          !scope || scope.values.includes(v) ? [`- \`${v}\`: ${l10n.schemaText(rule['x-enumDescriptions']![j])}`] : [],
        ),
      );
  }
  if (scope) lines.push('', scope.note);
  if (isSection)
    lines.push(
      '',
      l10n.t(
        'Fields: {0}',
        joined(
          Object.keys(rule.properties ?? {}).map((k) => `\`${k}\``),
          l10n.t,
        ),
      ),
    );
  return lines.join('\n');
}
