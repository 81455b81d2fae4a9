// `l10n.t()` for the pages: the host (a VS Code webview, or the browser dashboard's server) puts
// the bundle for the display language into the page, as a JSON `data-l10n` attribute on <body>
// or with the first state message through `setBundle`. Strings are keyed by their English text,
// like `vscode.l10n.t`, so `@vscode/l10n-dev export` finds `l10n.t('…')` calls here too and the
// one l10n/bundle.l10n.<locale>.json serves the host and every page.
import { formatMessage, type L10nBundle } from '../../src/shared/l10n';

/** The page's document, typed without the DOM library: node programs (unit tests) import this too. */
interface PageDocument {
  documentElement: { lang: string };
  body: { dataset: Record<string, string | undefined> } | null;
}
const page = (): PageDocument | undefined => (globalThis as { document?: PageDocument }).document;

let current: L10nBundle = {};
let lang = 'en';

/** Uses a bundle (empty: English) and the language tag for number and date formats. */
export function setBundle(bundle: L10nBundle, language = 'en'): void {
  current = bundle;
  lang = language;
  const doc = page();
  if (doc) doc.documentElement.lang = language;
}

/** Reads the bundle the host put on <body data-l10n="{...}" data-lang="zh-cn">, if any. */
export function loadBundleFromBody(): void {
  const doc = page();
  const raw = doc?.body?.dataset.l10n;
  if (!raw) return;
  try {
    const parsed: unknown = JSON.parse(raw);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      const bundle: Record<string, string> = {};
      for (const [k, v] of Object.entries(parsed)) if (typeof v === 'string') bundle[k] = v;
      setBundle(bundle, doc?.body?.dataset.lang || 'en');
    }
  } catch {
    // a broken attribute leaves the page in English
  }
}

/** The translated message, placeholders filled (as a template literal would print them). */
export function t(message: string, ...args: unknown[]): string {
  return formatMessage(Object.hasOwn(current, message) ? current[message] : message, args);
}

/** The page's language tag, for Intl number and date formats. */
export function language(): string {
  return lang;
}
