// The dashboard's HTML shell for a VS Code webview: CSP `default-src 'none'`, the UI bundle's
// script by nonce, its stylesheet (when the build made one) from the extension's own origin, and
// `<div id="app">` for the UI to render into. Kept free of `vscode` so the bench can load the real
// bundle in Chromium under exactly this policy.

export interface ShellAssets {
  /** The webview's `cspSource` (where the extension's files are served from). */
  cspSource: string;
  scriptUri: string;
  /** Absent when the build made no stylesheet. */
  styleUri?: string;
  /** A fresh random nonce per page (base64). */
  nonce: string;
}

export function dashboardShell(a: ShellAssets): string {
  const csp = [
    "default-src 'none'",
    `script-src 'nonce-${a.nonce}'`,
    `style-src ${a.cspSource}`,
    `img-src ${a.cspSource} data:`,
    `font-src ${a.cspSource}`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
${a.styleUri ? `<link rel="stylesheet" href="${a.styleUri}">\n` : ''}<title>Ascend dashboard</title>
</head>
<body>
<div id="app"></div>
<script nonce="${a.nonce}" src="${a.scriptUri}"></script>
</body>
</html>`;
}
