// The one webview page (src/core/webviewPage.ts) that both panels use: the dashboard's page is
// checked in dashboard/html.test.ts; here the checkpoint explorer's, and what every page shares.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dashboardShell } from '../../src/core/dashboard/html';
import { newNonce, webviewPage } from '../../src/core/webviewPage';

const assets = {
  cspSource: 'vscode-webview://abc',
  scriptUri: 'vscode-webview://abc/dist/webview/checkpoints.js',
  styleUri: 'vscode-webview://abc/dist/webview/checkpoints.css',
  nonce: 'bm9uY2UxMjM0NTY3ODkwYWI=',
};

test("the explorer's page: the same CSP as the dashboard's, its stylesheet linked, a placeholder until it renders", () => {
  const html = webviewPage({ ...assets, title: 'Checkpoints', placeholder: 'Loading…' });
  const csp = (h: string) => /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(h)?.[1];
  assert.equal(
    csp(html),
    "default-src 'none'; script-src 'nonce-bm9uY2UxMjM0NTY3ODkwYWI='; style-src vscode-webview://abc; img-src vscode-webview://abc data:; font-src vscode-webview://abc",
  );
  assert.equal(csp(html), csp(dashboardShell(assets)));
  assert.match(html, /<link rel="stylesheet" href="vscode-webview:\/\/abc\/dist\/webview\/checkpoints\.css">/);
  assert.match(html, /<title>Checkpoints<\/title>/);
  assert.match(
    html,
    /<div id="app">Loading…<\/div>\n<script nonce="bm9uY2UxMjM0NTY3ODkwYWI=" src="vscode-webview:\/\/abc\/dist\/webview\/checkpoints\.js"><\/script>/,
  );
  assert.equal((html.match(/<script/g) ?? []).length, 1);
  assert.ok(!/<style| on\w+=|style="/.test(html), 'no inline styles or handlers');
});

test('the title and placeholder are text; each page gets a fresh nonce', () => {
  const html = webviewPage({ ...assets, title: 'a <b> & c', placeholder: '<img src=x>' });
  assert.match(html, /<title>a &lt;b&gt; &amp; c<\/title>/);
  assert.match(html, /<div id="app">&lt;img src=x&gt;<\/div>/);
  const a = newNonce();
  assert.match(a, /^[A-Za-z0-9+/]{22}==$/, '16 random bytes, base64');
  assert.notEqual(a, newNonce());
});
