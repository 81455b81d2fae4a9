// The language server's messages in the client's display language (LSP `initialize` params
// `locale`, which VS Code fills with vscode.env.language). The server runs outside the extension
// host, so it carries the one zh-cn bundle itself (l10n/bundle.l10n.zh-cn.json, bundled by esbuild)
// and uses the same message format as vscode.l10n.t: messages keyed by their English text.
import zhCn from '../../l10n/bundle.l10n.zh-cn.json';
import { bundleLocale, english, translator, type L10nArg, type Translate } from '../shared/l10n';

const BUNDLES: Record<string, Translate> = { 'zh-cn': translator(zhCn as Record<string, string>) };
let current: Translate = english;

/** Picks the messages for a client locale (`zh-cn`, `zh-CN`, `zh-Hans`…); anything else is English. */
export function setLocale(locale: string | undefined): void {
  current = BUNDLES[bundleLocale(locale) ?? ''] ?? english;
}

/** The message in the client's language, placeholders filled. */
export function t(message: string, ...args: L10nArg[]): string {
  return current(message, ...args);
}
