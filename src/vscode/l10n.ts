// The translator core and server code is given in the extension host: vscode.l10n.t, and the
// display language for number formats (src/core/l10n.ts explains why core takes one).
import * as vscode from 'vscode';
import type { Translate } from '../core/l10n';
import type { Wording } from '../core/runs/runnerCodes';

export const translate: Translate = (message, ...args) => vscode.l10n.t(message, ...args);

/** The translator with VS Code's display language, for sentences that format numbers. */
export function wording(): Wording {
  return { t: translate, language: vscode.env.language };
}
