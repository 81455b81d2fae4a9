// The panel's HTML shell: the only script is the bundle, by nonce; nothing else may load or run.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dashboardShell } from '../../../src/core/dashboard/html';

test('CSP default-src none, the bundle by nonce, styles and images only from the extension', () => {
  const html = dashboardShell({
    cspSource: 'vscode-webview://abc',
    scriptUri: 'vscode-webview://abc/dist/webview/dashboard.js',
    styleUri: 'vscode-webview://abc/dist/webview/dashboard.css',
    nonce: 'bm9uY2UxMjM0NTY3ODkwYWI=',
  });
  const csp = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)?.[1];
  assert.equal(
    csp,
    "default-src 'none'; script-src 'nonce-bm9uY2UxMjM0NTY3ODkwYWI='; style-src vscode-webview://abc; img-src vscode-webview://abc data:; font-src vscode-webview://abc",
  );
  assert.match(html, /<link rel="stylesheet" href="vscode-webview:\/\/abc\/dist\/webview\/dashboard\.css">/);
  assert.match(
    html,
    /<div id="app"><\/div>\n<script nonce="bm9uY2UxMjM0NTY3ODkwYWI=" src="vscode-webview:\/\/abc\/dist\/webview\/dashboard\.js"><\/script>/,
  );
  assert.equal((html.match(/<script/g) ?? []).length, 1);
  assert.ok(!/ on\w+=|style="/.test(html), 'no inline handlers or styles');
});

test('no stylesheet link when the build made none', () => {
  const html = dashboardShell({ cspSource: 'x', scriptUri: 'x/d.js', nonce: 'n' });
  assert.ok(!html.includes('<link'));
});
