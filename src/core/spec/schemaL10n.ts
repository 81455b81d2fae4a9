// The schemas' user-visible text (field descriptions, enum value descriptions, titles, what a value
// must be) in the display language. The schemas stay English, since the runner reads them; the
// translations live in l10n/schema.l10n.<locale>.json, keyed by the English text like the l10n
// bundles: an edited description has no entry, so it shows in English (never a stale translation)
// and test/unit/spec/schemaL10n.test.ts fails until it is translated again.
import { bundleLocale } from '../../shared/l10n';
import type { SchemaNode } from './fields';

/** English schema text -> the display language's. */
export type SchemaText = (english: string) => string;

// esbuild bundles the JSON into the extension and the server (see fields.ts for why a require).
// eslint-disable-next-line @typescript-eslint/no-require-imports -- see above
const ZH_CN: Record<string, string> = require('../../../l10n/schema.l10n.zh-cn.json');

const TABLES: Record<string, Readonly<Record<string, string>>> = { 'zh-cn': ZH_CN };

export const englishSchemaText: SchemaText = (english) => english;

/** The schema text translator for a display language (`zh-cn`, `zh-CN`, `zh-Hans`…); others are English. */
export function schemaTranslator(language: string | undefined): SchemaText {
  const table = TABLES[bundleLocale(language) ?? ''];
  return table ? (english) => (Object.hasOwn(table, english) ? table[english] : english) : englishSchemaText;
}

/** The keys whose string values a user reads (hover, completion, the wizard, the editor's problems). */
const TEXT_KEYS = ['title', 'description', 'markdownDescription', 'x-expect', 'x-fix'] as const;

/** Every user-visible string of a schema, in document order, each once. */
export function schemaStrings(schema: SchemaNode): string[] {
  const out = new Set<string>();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (typeof node !== 'object' || node === null) return;
    const n = node as Record<string, unknown>;
    for (const k of TEXT_KEYS) if (typeof n[k] === 'string') out.add(n[k] as string);
    const enumDocs = n['x-enumDescriptions'];
    if (Array.isArray(enumDocs)) for (const d of enumDocs) if (typeof d === 'string') out.add(d);
    // Values (defaults, enums, examples) are data, not text.
    for (const [k, v] of Object.entries(n)) if (!['default', 'enum', 'examples', 'const'].includes(k)) walk(v);
  };
  walk(schema);
  return [...out];
}

/** The `code spans` of a markdown text, sorted: a translation keeps them all, as written. */
export function codeSpans(text: string): string[] {
  return [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]).sort();
}
