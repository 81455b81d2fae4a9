// The translator that core code building user sentences is given (core never imports `vscode`):
// src/vscode passes `vscode.l10n.t`, tests and the CLI keep the English default.
export { english, formatMessage, joined, type L10nArg, type Translate } from '../shared/l10n';
