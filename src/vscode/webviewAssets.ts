// What a webview panel of this extension needs to load one of its UI bundles
// (dist/webview/<name>.js and, when the build made one, <name>.css): the panel options and the
// page's assets for the one page shell (src/core/webviewPage.ts).
import { existsSync } from 'node:fs';
import * as vscode from 'vscode';
import { newNonce } from '../core/webviewPage';
import type { L10nBundle } from '../shared/l10n';

/** Scripts on; files only from the bundles' folder and media/. */
export function webviewOptions(extensionUri: vscode.Uri): vscode.WebviewOptions {
  return {
    enableScripts: true,
    localResourceRoots: [
      vscode.Uri.joinPath(extensionUri, 'dist', 'webview'),
      vscode.Uri.joinPath(extensionUri, 'media'),
    ],
  };
}

/** The bundle's script and stylesheet as the webview serves them, its CSP source and a fresh nonce. */
export function bundleAssets(
  webview: Pick<vscode.Webview, 'asWebviewUri' | 'cspSource'>,
  extensionUri: vscode.Uri,
  name: 'dashboard' | 'checkpoints' | 'preview' | 'runsTable' | 'sweep',
): { cspSource: string; scriptUri: string; styleUri?: string; nonce: string } {
  const file = (f: string) => vscode.Uri.joinPath(extensionUri, 'dist', 'webview', f);
  return {
    cspSource: webview.cspSource,
    scriptUri: webview.asWebviewUri(file(`${name}.js`)).toString(),
    styleUri: existsSync(file(`${name}.css`).fsPath) ? webview.asWebviewUri(file(`${name}.css`)).toString() : undefined,
    nonce: newNonce(),
  };
}

/** The display language and the extension's bundle for it, for the page (webview/shared/l10n.ts). */
export function pageL10n(): { language: string; bundle: L10nBundle } {
  return { language: vscode.env.language, bundle: vscode.l10n.bundle ?? {} };
}
