// The language server's messages in the client's display language (LSP `initialize` params
// `locale`, which VS Code fills with vscode.env.language). The server runs outside the extension
// host, so it carries the one zh-cn bundle itself (l10n/bundle.l10n.zh-cn.json, bundled by esbuild)
// and uses the same message format as vscode.l10n.t: messages keyed by their English text.
import zhCn from '../../l10n/bundle.l10n.zh-cn.json';
import { bundleLocale, english, translator, type L10nArg, type Translate } from '../shared/l10n';
import { englishSchemaText, schemaTranslator, type SchemaText } from '../core/spec/schemaL10n';

const BUNDLES: Record<string, Translate> = { 'zh-cn': translator(zhCn as Record<string, string>) };
let current: Translate = english;
let currentSchema: SchemaText = englishSchemaText;

/** Picks the messages for a client locale (`zh-cn`, `zh-CN`, `zh-Hans`…); anything else is English. */
export function setLocale(locale: string | undefined): void {
  current = BUNDLES[bundleLocale(locale) ?? ''] ?? english;
  currentSchema = schemaTranslator(locale);
}

/** Whether the client reads another language than English (the server's English is its source text). */
export function localised(): boolean {
  return current !== english;
}

/** The message in the client's language, placeholders filled. */
export function t(message: string, ...args: L10nArg[]): string {
  return current(message, ...args);
}

/** A schema description (or enum description, title, x-expect) in the client's language; undefined stays so. */
export function schemaText(english: string): string;
export function schemaText(english: string | undefined): string | undefined;
export function schemaText(english: string | undefined): string | undefined {
  return english === undefined ? undefined : currentSchema(english);
}
