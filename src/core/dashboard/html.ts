// The dashboard's HTML shell for a VS Code webview: the one webview page (src/core/webviewPage.ts,
// CSP `default-src 'none'`, the UI bundle's script by nonce, its stylesheet when the build made one)
// titled for the dashboard. Kept free of `vscode` so the bench can load the real bundle in Chromium
// under exactly this policy.
import { translator, type L10nBundle } from '../../shared/l10n';
import { webviewPage } from '../webviewPage';

export interface ShellAssets {
  /** The webview's `cspSource` (where the extension's files are served from). */
  cspSource: string;
  scriptUri: string;
  /** Absent when the build made no stylesheet. */
  styleUri?: string;
  /** A fresh random nonce per page (base64). */
  nonce: string;
}

/** `l10n`: the display language and its bundle, read by the page (webview/shared/l10n.ts). */
export function dashboardShell(a: ShellAssets, l10n?: { language: string; bundle: L10nBundle }): string {
  const t = translator(l10n?.bundle ?? {});
  return webviewPage({ ...a, title: t('Ascend dashboard'), l10n });
}
