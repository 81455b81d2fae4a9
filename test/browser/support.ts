// A webview's own page in a real headless Chromium (playwright-core + Debian's /usr/bin/chromium),
// as VS Code would show it: the bundle built as esbuild.mjs builds it (its CSS import becomes
// NAME.css beside NAME.js), served with the host's own HTML and Content-Security-Policy from
// 127.0.0.1, whose origin stands in for the webview's cspSource. Importing this module puts the
// fake `vscode` (test/unit/fixtures/fakeVscode) in place, so the host modules that make the HTML
// can be required afterwards, in the test's `before`.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as http from 'node:http';
import Module from 'node:module';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import * as esbuild from 'esbuild';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { RunnerConfig } from '../../src/core/targets/invocation';
import { runRunner } from '../../src/core/targets/runnerCli';
import * as fake from '../unit/fixtures/fakeVscode';

export const CHROMIUM = '/usr/bin/chromium';
const ROOT = path.join(__dirname, '..', '..');
export const PYTHON = path.join(ROOT, '.venv', 'bin', 'python');
/** The repo's runner in the repo's venv, as the tests that train real runs call it. */
export const RUNNER: RunnerConfig = { python: PYTHON, runnerDir: path.join(ROOT, 'runner') };

const mod = Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown };
const load = mod._load;
mod._load = (request, ...rest) => (request === 'vscode' ? fake : load(request, ...rest));

/** What the host's HTML functions use of a `vscode.Webview`. */
export interface FakeWebview {
  cspSource: string;
  asWebviewUri(u: { fsPath: string }): { toString(): string };
}

export interface WebviewHost {
  /** The page's address. */
  base: string;
  browser: Browser;
  /** The folder the bundle was built in (dist/webview/ below it); the extension's root for the HTML. */
  dir: string;
  close(): Promise<void>;
}

export interface WebviewHostOptions {
  /** The webview's folder under webview/ and its bundle's name: `checkpoints` for webview/checkpoints/main.ts. */
  name: string;
  /** The bundle's name when it differs from the folder's. */
  bundle?: string;
  /** The host's page: e.g. `(webview, root) => explorerHtml(webview, root)`. */
  html: (webview: never, extensionUri: never) => string;
  /** A temporary folder to build in; without it one is made (prefix `aft-NAME-`) and removed on close. */
  dir?: string;
}

/** Builds webview/NAME/main.ts into `outfile` as esbuild.mjs builds dist/webview (its CSS import becomes a .css beside it). */
export async function buildWebview(name: string, outfile: string): Promise<void> {
  await esbuild.build({
    entryPoints: [path.join(ROOT, 'webview', name, 'main.ts')],
    outfile,
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    loader: { '.css': 'css' },
    logLevel: 'warning',
  });
}

/** Debian's Chromium, headless, as every browser test runs it. */
export function launchChromium(): Promise<Browser> {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install chromium (.ci/run does this)`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

/** The runner's demo images (`make-demo-data`: four shapes, 32 px) in `dir`; returns their train folder. */
export async function makeDemoData(dir: string, perClass: number): Promise<string> {
  assert.ok(existsSync(PYTHON), `${PYTHON} is missing: run bash scripts/setup-python.sh`);
  const out = await runRunner<{ train: string }>(RUNNER, [
    'make-demo-data',
    dir,
    '--per-class',
    String(perClass),
    '--size',
    '32',
  ]);
  return out.train;
}

/** Builds the webview's bundle, serves its page and launches Chromium. */
export async function serveWebview(o: WebviewHostOptions): Promise<WebviewHost> {
  const bundle = o.bundle ?? o.name;
  const dir = o.dir ?? mkdtempSync(path.join(tmpdir(), `aft-${o.name}-`));
  const webRoot = path.join(dir, 'dist', 'webview');
  await buildWebview(o.name, path.join(webRoot, `${bundle}.js`));
  const types: Record<string, string> = { '.js': 'text/javascript', '.css': 'text/css' };
  const served = new Set([`/${bundle}.js`, `/${bundle}.css`]);
  let base = '';
  const server = http.createServer((req, res) => {
    const url = req.url ?? '';
    if (served.has(url)) {
      res.writeHead(200, { 'content-type': types[path.extname(url)] }).end(readFileSync(path.join(webRoot, url)));
      return;
    }
    // What a webview does: the extension's files under its own origin (cspSource).
    const webview: FakeWebview = {
      cspSource: base,
      asWebviewUri: (u) => ({ toString: () => `${base}/${path.basename(u.fsPath)}` }),
    };
    res.writeHead(200, { 'content-type': 'text/html' }).end(o.html(webview as never, fake.Uri.file(dir) as never));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const browser = await launchChromium();
  return {
    base,
    browser,
    dir,
    close: async () => {
      await browser.close();
      server.close();
      if (!o.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A webview's page with what the Content-Security-Policy refused (console messages), for `[]` checks. */
export type WebviewPage = Page & { refused: string[] };

/**
 * Opens the webview's page as VS Code would: `acquireVsCodeApi` records what the page posts to the
 * host (`window.__sent`, read with `sentMessages`) and keeps its state; resolves once the page
 * says `ready`.
 */
export async function openWebview(
  web: WebviewHost,
  viewport?: { width: number; height: number },
): Promise<WebviewPage> {
  const page = (await web.browser.newPage(viewport ? { viewport } : {})) as WebviewPage;
  page.refused = [];
  page.on('console', (m) => /Content.Security.Policy|Refused/i.test(m.text()) && page.refused.push(m.text()));
  // A string, not a function: tsx would add its `__name` helper, which the page does not have.
  await page.addInitScript(`
    window.__sent = [];
    let saved = null;
    window.acquireVsCodeApi = () => ({ postMessage: (m) => window.__sent.push(m), getState: () => saved, setState: (s) => (saved = s) });
  `);
  await page.goto(web.base);
  await page.waitForFunction(() =>
    (globalThis as unknown as { __sent: { type: string }[] }).__sent.some((m) => m.type === 'ready'),
  );
  return page;
}

/** What the host sends: `{type: 'state', state}` to the page. */
export function postState(page: Page, state: unknown): Promise<void> {
  return page.evaluate(
    (st) =>
      (globalThis as unknown as { postMessage(m: unknown, o: string): void }).postMessage(
        { type: 'state', state: st },
        '*',
      ),
    state,
  );
}

/** Every message the page posted to the host so far, oldest first. */
export function sentMessages(page: Page): Promise<{ type: string }[]> {
  return page.evaluate(() => (globalThis as unknown as { __sent: { type: string }[] }).__sent);
}
