// The checkpoint explorer UI (webview/checkpoints) in a real headless Chromium (playwright-core +
// Debian's /usr/bin/chromium), behind the host's own page and Content-Security-Policy
// (explorerHtml, src/vscode/checkpoints/explorer.ts): the bundle and its stylesheet must load under
// `default-src 'none'` with its nonce, draw the host's snapshot with run text as text, sort, and
// send the messages the host validates.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as http from 'node:http';
import Module from 'node:module';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import * as esbuild from 'esbuild';
import { chromium, type Browser, type Page } from 'playwright-core';
import { validateUiMessage, type ExplorerState } from '../../src/shared/checkpointsProtocol';
import * as fake from '../unit/fixtures/fakeVscode';

const CHROMIUM = '/usr/bin/chromium';
const root = path.join(__dirname, '..', '..');
const mod = Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown };
const load = mod._load;
mod._load = (request, ...rest) => (request === 'vscode' ? fake : load(request, ...rest));

let tmp: string;
let server: http.Server;
let base: string;
let browser: Browser;

before(async () => {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install chromium (.ci/run does this)`);
  tmp = mkdtempSync(path.join(tmpdir(), 'aft-ckui-'));
  // Built as esbuild.mjs builds it: the CSS import becomes checkpoints.css beside the script.
  const webRoot = path.join(tmp, 'dist', 'webview');
  await esbuild.build({
    entryPoints: [path.join(root, 'webview/checkpoints/main.ts')],
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    loader: { '.css': 'css' },
    outfile: path.join(webRoot, 'checkpoints.js'),
    logLevel: 'error',
  });
  const { explorerHtml } =
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- after the fake vscode above is in place
    require('../../src/vscode/checkpoints/explorer') as typeof import('../../src/vscode/checkpoints/explorer');
  const types: Record<string, string> = { '.js': 'text/javascript', '.css': 'text/css' };
  server = http.createServer((req, res) => {
    const file = /^\/(checkpoints\.(js|css))$/.exec(req.url ?? '')?.[1];
    if (file) {
      res.writeHead(200, { 'content-type': types[path.extname(file)] }).end(readFileSync(path.join(webRoot, file)));
      return;
    }
    // What a webview does: the extension's files under its own origin (cspSource).
    const webview = {
      cspSource: base,
      asWebviewUri: (u: { fsPath: string }) => ({ toString: () => `${base}/${path.basename(u.fsPath)}` }),
    };
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(explorerHtml(webview as never, fake.Uri.file(tmp) as never));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
});
after(async () => {
  await browser?.close();
  server?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

const row = (file: string, step: number, valAcc: number | null, best = false, problem: string | null = null) => ({
  file,
  name: file.split('/')[1],
  epoch: step,
  step,
  loss: 1 / step,
  valLoss: 2 / step,
  valAcc,
  reason: null,
  bytes: 44_767_056,
  createdAt: 1796215428 + step,
  best,
  problem,
  exports: [],
  evalAcc: null,
});
const files = ['checkpoints/ck-e1-s2.ckpt', 'checkpoints/ck-e1-s3.ckpt', 'checkpoints/ck-e2-s6.ckpt'];
const state: ExplorerState = {
  run: {
    name: '<img src=x onerror="window.__pwned=1">run',
    runId: 'r1',
    target: 'ssh gpu',
    backbone: 'resnet18',
    pretrained: 'mindcv:resnet18',
    weightsSha256: 'ab12cd34ef56'.padEnd(64, '0'),
    preprocess: 'mindcv',
    freeze: 'backbone',
    classes: ['a', 'b', 'c', 'd'],
    live: false,
    ssh: true,
  },
  rows: [
    row(files[0], 2, null),
    row(files[1], 3, 0.75, true),
    row(files[2], 6, 0.5, false, 'sha256 differs from checkpoints.json'),
  ],
  problems: [{ label: '/etc/passwd', message: 'absolute path (must be relative to the run directory)' }],
  selected: null,
  tensors: null,
  evaluation: null,
  comparison: null,
  busy: null,
  error: null,
};

async function open(): Promise<Page> {
  const page = await browser.newPage();
  const refused: string[] = [];
  page.on('console', (m) => /Content.Security.Policy|Refused/i.test(m.text()) && refused.push(m.text()));
  (page as unknown as { refused: string[] }).refused = refused;
  // What acquireVsCodeApi gives a webview: postMessage to the host (recorded here) and state.
  // A string, not a function: tsx would add its `__name` helper, which the page does not have.
  await page.addInitScript(`
    window.__sent = [];
    let saved = null;
    window.acquireVsCodeApi = () => ({ postMessage: (m) => window.__sent.push(m), getState: () => saved, setState: (s) => (saved = s) });
  `);
  await page.goto(base);
  await page.waitForFunction(() =>
    (globalThis as unknown as { __sent: { type: string }[] }).__sent.some((m) => m.type === 'ready'),
  );
  return page;
}
const post = (page: Page, s: ExplorerState) =>
  page.evaluate(
    (st) =>
      (globalThis as unknown as { postMessage(m: unknown, o: string): void }).postMessage(
        { type: 'state', state: st },
        '*',
      ),
    s,
  );
const sent = (page: Page) => page.evaluate(() => (globalThis as unknown as { __sent: unknown[] }).__sent);
const names = (page: Page) => page.locator('tbody tr.row td:nth-child(3)').allTextContents();

test(
  'the explorer runs under its CSP, shows run text as text, sorts, and sends only valid messages',
  { timeout: 60_000 },
  async () => {
    const page = await open();
    await post(page, state);
    await page.locator('tr.row').first().waitFor();
    assert.equal(
      await page
        .locator('th')
        .first()
        .evaluate((th) => getComputedStyle(th).cursor),
      'pointer',
      "the explorer's stylesheet (webview/checkpoints/explorer.css) is applied",
    );
    assert.equal(await page.locator('img').count(), 0, 'run text is never HTML');
    assert.equal(await page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned), undefined);
    assert.match((await page.locator('h2').textContent()) ?? '', /<img src=x/);
    // Where the weights came from, from the manifest: the source, its sha256 and the preprocessing.
    assert.match(
      (await page.locator('body').textContent()) ?? '',
      /from mindcv:resnet18 \(sha256 ab12cd34ef56…\) · preprocess mindcv/,
    );
    assert.match((await page.locator('body').textContent()) ?? '', /⚠ \/etc\/passwd: absolute path/);
    assert.match(
      (await page.locator('tr.row').nth(0).textContent()) ?? '',
      /ck-e2-s6\.ckpt.*✖ sha256 differs/,
      'newest step first, its problem shown',
    );
    assert.equal(await page.locator('td.star').filter({ hasText: '★' }).count(), 1);

    // Sort by val acc (descending first), then ascending; unknown values stay last.
    await page.locator('th', { hasText: /^Val acc/ }).click();
    assert.deepEqual(await names(page), ['ck-e1-s3.ckpt', 'ck-e2-s6.ckpt', 'ck-e1-s2.ckpt']);
    await page.locator('th', { hasText: /^Val acc/ }).click();
    assert.deepEqual(await names(page), ['ck-e2-s6.ckpt', 'ck-e1-s3.ckpt', 'ck-e1-s2.ckpt']);

    // A click selects; two ticks and Compare send a compare of those two.
    await page.locator('tr.row', { hasText: 'ck-e1-s3.ckpt' }).click();
    await page.locator('tr.row', { hasText: 'ck-e1-s2.ckpt' }).locator('input').check();
    await page.locator('tr.row', { hasText: 'ck-e2-s6.ckpt' }).locator('input').check();
    await page.locator('vscode-button', { hasText: 'Compare the two picked' }).click();

    // The host's answer: selected checkpoint with tensors, an evaluation and a comparison.
    await post(page, {
      ...state,
      selected: files[1],
      tensors: {
        file: files[1],
        total: 11_000_000,
        headOut: 5,
        headMatchesClasses: false,
        tensors: [
          {
            name: 'backbone.conv1.weight',
            shape: [64, 3, 7, 7],
            dtype: 'Float32',
            elements: 9408,
            module: 'backbone.conv1',
            trainable: false,
          },
          {
            name: 'backbone.layer1.0.conv1.weight',
            shape: [64, 64, 3, 3],
            dtype: 'Float32',
            elements: 36864,
            module: 'backbone.layer1',
            trainable: false,
          },
          { name: 'head.weight', shape: [5, 512], dtype: 'Float32', elements: 2560, module: 'head', trainable: true },
        ],
      },
      evaluation: {
        file: files[1],
        data: '/d/val',
        numImages: 8,
        accuracy: 0.75,
        loss: 0.6,
        classes: ['a', 'b', 'c', 'd'],
        perClass: ['a', 'b', 'c', 'd'].map((c) => ({ class: c, precision: 0.5, recall: 1, support: 2 })),
        confusion: [
          [2, 0, 0, 0],
          [0, 2, 0, 0],
          [1, 0, 1, 0],
          [0, 0, 1, 1],
        ],
        skipped: 0,
        evaluatedAt: 1796215500,
      },
      comparison: {
        a: files[0],
        b: files[2],
        tensors: [
          { name: 'head.weight', shape: [4, 512], l2: 0.3, rel: 0.1, frozen: false },
          { name: 'backbone.conv1.weight', shape: [64, 3, 7, 7], l2: 0, rel: 0, frozen: true },
        ],
        onlyInA: [],
        onlyInB: [],
        shapeMismatch: [],
        changed: 1,
        unchanged: 1,
        frozenMaxL2: 0,
      },
    });
    await page.locator('details').first().waitFor();
    assert.deepEqual(await page.locator('details summary .module').allTextContents(), [
      'backbone.conv1',
      'backbone.layer1',
      'head',
    ]);
    assert.match((await page.locator('details').nth(0).locator('summary').textContent()) ?? '', /frozen/);
    assert.match((await page.locator('details').nth(2).locator('summary').textContent()) ?? '', /trained/);
    assert.match((await page.locator('body').textContent()) ?? '', /✖ The head outputs 5 classes, the run has 4/);
    assert.equal(await page.locator('table.cm tbody td').count(), 16, 'a 4x4 confusion matrix');
    assert.match((await page.locator('body').textContent()) ?? '', /Accuracy 75\.0% .* 8 images in \/d\/val/);
    assert.match((await page.locator('body').textContent()) ?? '', /✔ The frozen part is unchanged/);
    await page.locator('vscode-button', { hasText: 'Export ONNX' }).click();
    await page.locator('vscode-button', { hasText: 'Download' }).click();

    const messages = (await sent(page)) as { type: string }[];
    const known = new Set(files);
    for (const m of messages) assert.ok(validateUiMessage(m, known).ok, `the host would refuse ${JSON.stringify(m)}`);
    assert.deepEqual(
      messages.filter((m) => m.type !== 'ready'),
      [
        { type: 'select', file: files[1] },
        { type: 'compare', a: files[0], b: files[2] },
        { type: 'export', file: files[1], format: 'onnx' },
        { type: 'action', action: 'download', file: files[1] },
      ],
    );
    assert.deepEqual((page as unknown as { refused: string[] }).refused, [], 'no CSP violations');
    await page.close();
  },
);
