// The translator that core code building user sentences is given (core never imports `vscode`):
// src/vscode passes `vscode.l10n.t`, tests and the CLI keep the English default.
import { english, type Translate } from '../shared/l10n';

export { english, formatMessage, joined, type L10nArg, type Translate } from '../shared/l10n';

/**
 * An error core throws that reaches the user (a spec's syntax, a stream that stopped): its
 * `message` stays English for logs and the CLI, and `words(t)` says it in the user's language
 * (the glue's errorText uses it when present).
 */
export class WordedError extends Error {
  constructor(readonly words: (t: Translate) => string) {
    super(words(english));
  }
}

/** The error's sentence in the user's language when core can word it, else undefined. */
export function wordedErrorText(e: unknown, t: Translate): string | undefined {
  return e instanceof WordedError ? e.words(t) : undefined;
}
