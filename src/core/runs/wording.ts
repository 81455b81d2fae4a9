// The machinery runnerCodes.ts (warnings, verdict reasons) and runnerErrors.ts (errors) word the
// runner's codes with: typed reads of a code's parameters, named placeholders filled after `t`,
// list punctuation (src/shared/l10n.ts's joined), and the attempt that falls back when a parameter does not fit.
import { english, formatMessage, joined, type Translate } from '../l10n';

/** What a sentence is worded with: the translator and the language tag for number formats. */
export interface Wording {
  t: Translate;
  language?: string;
}

export const ENGLISH_WORDING: Wording = { t: english };

export type Obj = Readonly<Record<string, unknown>>;
export const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);

/** Typed reads of a code's parameters; a read of an absent or ill-typed one marks the render as failed. */
export class Params {
  bad = false;
  readonly used = new Set<string>();
  constructor(
    private readonly p: Obj,
    readonly language: string | undefined,
  ) {}

  private get(key: string): unknown {
    this.used.add(key);
    return this.p[key];
  }
  private fail(): string {
    this.bad = true;
    return '';
  }
  /** A number parameter as it is (for arithmetic); NaN marks the render as failed. */
  value(key: string): number {
    const v = this.get(key);
    if (typeof v === 'number' && Number.isFinite(v)) return v;
    this.fail();
    return NaN;
  }
  /** A number as the locale writes it (grouping, decimal mark), up to `digits` significant digits. */
  num(key: string, digits = 4): string {
    return this.fmtNum(this.get(key), digits);
  }
  fmtNum(v: unknown, digits = 4): string {
    if (typeof v !== 'number' || !Number.isFinite(v)) return this.fail();
    return new Intl.NumberFormat(this.language, { maximumSignificantDigits: digits }).format(v);
  }
  /** A share of 0..1 as a percentage: `92%`, `17.7%` (one decimal, as the runner's messages). */
  pct(key: string, decimals = 1): string {
    const v = this.get(key);
    if (typeof v !== 'number' || !Number.isFinite(v)) return this.fail();
    return new Intl.NumberFormat(this.language, { style: 'percent', maximumFractionDigits: decimals }).format(v);
  }
  /** An identifier-like number (a pid, a trial, an exit code): written as it is, never grouped. */
  id(key: string): string {
    const v = this.get(key);
    return typeof v === 'number' && Number.isFinite(v) ? String(v) : this.fail();
  }
  str(key: string): string {
    const v = this.get(key);
    return typeof v === 'string' ? v : this.fail();
  }
  list(key: string): unknown[] {
    const v = this.get(key);
    if (Array.isArray(v)) return v;
    this.fail();
    return [];
  }
  obj(key: string): Obj {
    const v = this.get(key);
    if (isObj(v)) return v;
    this.fail();
    return {};
  }
  /** An optional parameter: undefined when absent or null, else it must be of the type asked. */
  has(key: string): boolean {
    const v = this.get(key);
    return v !== undefined && v !== null;
  }
  bool(key: string): boolean {
    const v = this.get(key);
    if (typeof v === 'boolean') return v;
    this.fail();
    return false;
  }
}

export type Sentence = (p: Params, t: Translate) => string;

/** `t`'s result with its named placeholders filled (a translation may reorder them). */
export const fill = (template: string, values: Record<string, string>): string => formatMessage(template, [values]);

export { joined };

/** The sentence, with the parameters it read, or undefined when a parameter did not fit. */
export function attempt(
  sentence: Sentence,
  params: unknown,
  w: Wording,
): { text: string; used: Set<string> } | undefined {
  const p = new Params(isObj(params) ? params : {}, w.language);
  const text = sentence(p, w.t);
  return p.bad ? undefined : { text, used: p.used };
}
