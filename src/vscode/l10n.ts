// The translator core and server code is given in the extension host: vscode.l10n.t, and the
// display language for number formats (src/core/l10n.ts explains why core takes one).
import * as vscode from 'vscode';
import type { Translate } from '../core/l10n';
import type { Wording } from '../core/runs/runnerCodes';
import type { ProblemWording } from '../core/spec/problemWords';
import { schemaTranslator } from '../core/spec/schemaL10n';

export const translate: Translate = (message, ...args) => vscode.l10n.t(message, ...args);

/** The translator with VS Code's display language, for sentences that format numbers. */
export function wording(): Wording {
  return { t: translate, language: vscode.env.language };
}

/** How the schema's problems are worded: none in English, where the runner's own words stand. */
export function problemWording(): ProblemWording | undefined {
  return vscode.l10n.bundle ? { t: translate, schemaText: schemaTranslator(vscode.env.language) } : undefined;
}
