// The browser dashboard's language: `--lang` when given, else the request's Accept-Language, and
// the bundle for it from the extension's l10n/ folder (the one bundle.l10n.<locale>.json that VS
// Code reads too). English needs no bundle; a language without one falls back to English.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { bundleLocale, translator, type L10nBundle, type Translate } from '../../shared/l10n';

/** A bundle is a few hundred KB at most; anything larger is not ours. */
const MAX_BUNDLE_BYTES = 4 << 20;

export interface PageLocale {
  /** The page's language tag (`en`, `zh-cn`). */
  language: string;
  bundle: L10nBundle;
  t: Translate;
}

const ENGLISH: PageLocale = { language: 'en', bundle: {}, t: translator({}) };

/**
 * The locale of the first language in an Accept-Language header (by q) that is English or has a
 * bundle; undefined when none is named.
 */
export function fromAcceptLanguage(header: string | undefined): string | undefined {
  const tags = (header ?? '')
    .split(',')
    .slice(0, 20)
    .map((part, i) => {
      const [tag, ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find(Boolean);
      return { tag: tag.trim().toLowerCase(), q: q === undefined ? 1 : Number(q), i };
    })
    .filter((x) => x.tag && x.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i);
  for (const { tag } of tags) {
    if (tag === 'en' || tag.startsWith('en-')) return 'en';
    const locale = bundleLocale(tag);
    if (locale) return locale;
  }
  return undefined;
}

/** The locales a server offers, each bundle read once (a missing or bad bundle: English). */
export class Locales {
  private readonly cache = new Map<string, PageLocale>();

  constructor(
    private readonly l10nDir: string,
    /** `--lang`: this language for every page, whatever the browser asks. */
    private readonly forced?: string,
  ) {}

  /** The locale for a request's Accept-Language header. */
  forRequest(acceptLanguage: string | undefined): PageLocale {
    const wanted = this.forced !== undefined ? bundleLocale(this.forced) : fromAcceptLanguage(acceptLanguage);
    return wanted ? this.load(wanted) : ENGLISH;
  }

  private load(locale: string): PageLocale {
    let found = this.cache.get(locale);
    if (!found) {
      found = {
        language: locale,
        bundle: readBundle(path.join(this.l10nDir, `bundle.l10n.${locale}.json`)),
        t: ENGLISH.t,
      };
      found.t = translator(found.bundle);
      if (Object.keys(found.bundle).length === 0) found = ENGLISH;
      this.cache.set(locale, found);
    }
    return found;
  }
}

function readBundle(file: string): L10nBundle {
  try {
    const text = readFileSync(file, 'utf8');
    if (text.length > MAX_BUNDLE_BYTES) return {};
    const parsed: unknown = JSON.parse(text);
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return {};
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(parsed)) if (typeof v === 'string') out[k] = v;
    return out;
  } catch {
    return {};
  }
}
