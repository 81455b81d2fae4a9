// The one message format of every translated string, for the extension host, the language server,
// the webviews and the browser dashboard alike: VS Code's l10n format. A message is keyed by its
// English text; `{0}`, `{1}`… (or `{name}` with an object argument) are filled in after lookup, so
// a translation may move them to where its word order needs them. A bundle is the parsed
// l10n/bundle.l10n.<locale>.json; an empty bundle means English.

/** English message -> translated message (l10n/bundle.l10n.<locale>.json). */
export type L10nBundle = Readonly<Record<string, string>>;

export type L10nArg = string | number | boolean;

/** What code that builds user sentences is given: the English message and its arguments. */
export type Translate = (message: string, ...args: L10nArg[]) => string;

const PLACEHOLDER = /\{([^{}]+)\}/g;

/** Fills `{0}`/`{name}` placeholders; an unknown one is left as written. */
export function formatMessage(template: string, args: readonly unknown[]): string {
  const named = args.length === 1 && typeof args[0] === 'object' && args[0] !== null ? args[0] : undefined;
  return template.replace(PLACEHOLDER, (whole, key: string) => {
    const value = named ? (named as Record<string, unknown>)[key] : args[Number(key)];
    return value === undefined ? whole : String(value);
  });
}

/** A Translate over one bundle; messages the bundle lacks stay English. */
export function translator(bundle: L10nBundle): Translate {
  return (message, ...args) => formatMessage(Object.hasOwn(bundle, message) ? bundle[message] : message, args);
}

/**
 * Items of a list the user reads, in the language's list punctuation: `a, b, c` in English,
 * `a、b、c` in Chinese. The separator is the message `, ` of the bundle, so the host, the language
 * server, core code and the pages (each passing its own `t`) join lists the one way.
 */
export function joined(items: readonly string[], t: Translate): string {
  return items.join(t(', '));
}

/** English: the messages as written, placeholders filled. */
export const english: Translate = translator({});

/** The placeholders a message uses, sorted: a translation must use the same ones. */
export function placeholders(message: string): string[] {
  return [...message.matchAll(PLACEHOLDER)].map((m) => m[1]).sort();
}

/** The bundle file's locale for a language tag: `zh-CN` and `zh-Hans` read zh-cn; others have none yet. */
export function bundleLocale(language: string | undefined): string | undefined {
  const tag = (language ?? '').trim().toLowerCase();
  if (tag === 'zh-cn' || tag === 'zh' || tag.startsWith('zh-hans') || tag === 'zh-sg') return 'zh-cn';
  return undefined;
}
