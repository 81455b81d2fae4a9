// The schema checker's problems in the client's language: the one wording (core/spec/problemWords.ts)
// with the server's bundle, picked from the LSP initialize locale. English clients, and any kind it
// does not know, get the checker's own text unchanged.
import * as core from '../core/spec/problemWords';
import type { SpecProblem } from '../core/spec/schema';
import * as l10n from './l10n';

/** The server's wording, or none for an English client (the runner's words as they are). */
function wording(): core.ProblemWording | undefined {
  return l10n.localised() ? { t: l10n.t, schemaText: (s) => l10n.schemaText(s) } : undefined;
}

/** A problem's message and fix in the client's language. */
export function problemText(p: SpecProblem): { message: string; fix: string } {
  return core.problemText(p, wording());
}

/** The diagnostic's text: `path: message (fix)`, in the client's punctuation. */
export function problemLine(p: SpecProblem): string {
  return core.problemLine(p, wording());
}
