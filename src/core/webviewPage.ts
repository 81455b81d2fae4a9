// The one HTML page of every webview UI (the dashboard, the checkpoint explorer): a
// Content-Security-Policy of `default-src 'none'`, the UI bundle as the only script (by nonce), its
// stylesheet (when the build made one) and images and fonts from the extension's own origin only,
// and `<div id="app">` for the UI to render into. No inline script or style. The theme is VS
// Code's: the editor sets its colour variables and a vscode-light/-dark/-high-contrast class on
// <body>, and each bundle's CSS uses those (the dashboard's also has fallbacks for a plain
// browser). Kept free of `vscode` so tests and the bench can serve it to a real Chromium.
import { randomBytes } from 'node:crypto';
import type { L10nBundle } from '../shared/l10n';

export interface PageAssets {
  /** The webview's `cspSource` (where the extension's files are served from). */
  cspSource: string;
  scriptUri: string;
  /** Absent when the build made no stylesheet. */
  styleUri?: string;
  /** A fresh random nonce per page (base64): newNonce(). */
  nonce: string;
  title: string;
  /** Text in `#app` until the UI renders (none by default). */
  placeholder?: string;
  /** The display language and its bundle, read by webview/shared/l10n.ts (none: English). */
  l10n?: { language: string; bundle: L10nBundle };
}

/** A fresh nonce for one page. */
export function newNonce(): string {
  return randomBytes(16).toString('base64');
}

export function webviewPage(a: PageAssets): string {
  const csp = [
    "default-src 'none'",
    `script-src 'nonce-${a.nonce}'`,
    `style-src ${a.cspSource}`,
    `img-src ${a.cspSource} data:`,
    `font-src ${a.cspSource}`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="${escapeAttr(a.l10n?.language ?? 'en')}">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
${a.styleUri ? `<link rel="stylesheet" href="${a.styleUri}">\n` : ''}<title>${escapeText(a.title)}</title>
</head>
<body${a.l10n ? ` data-lang="${escapeAttr(a.l10n.language)}" data-l10n="${escapeAttr(JSON.stringify(a.l10n.bundle))}"` : ''}>
<div id="app">${escapeText(a.placeholder ?? '')}</div>
<script nonce="${a.nonce}" src="${a.scriptUri}"></script>
</body>
</html>`;
}

function escapeText(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function escapeAttr(s: string): string {
  return escapeText(s).replace(/"/g, '&quot;');
}
