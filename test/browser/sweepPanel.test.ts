// The Sweep panel UI (webview/sweep) in a real headless Chromium (playwright-core + Debian's
// /usr/bin/chromium), behind the host's own page and Content-Security-Policy (sweepHtml,
// src/vscode/sweeps/panel.ts), drawing a recorded real sweep-status (test/unit/fixtures/sweeps: 4
// trials of the demo shapes on CPU, 3 completed, 1 pruned): the best trial's row is highlighted, the
// importance bars are in Optuna's order, and the parallel-coordinates chart has one line per
// finished trial with a value; its buttons post the typed messages.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as http from 'node:http';
import Module from 'node:module';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import * as esbuild from 'esbuild';
import { chromium, type Browser, type Page } from 'playwright-core';
import { toSweepStatus } from '../../src/core/sweeps/client';
import { validateSweepUiMessage, type SweepPanelState } from '../../src/shared/sweepProtocol';
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
  tmp = mkdtempSync(path.join(tmpdir(), 'aft-sweepui-'));
  const webRoot = path.join(tmp, 'dist', 'webview');
  await esbuild.build({
    entryPoints: [path.join(root, 'webview/sweep/main.ts')],
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    loader: { '.css': 'css' },
    outfile: path.join(webRoot, 'sweep.js'),
    logLevel: 'error',
  });
  const { sweepHtml } =
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- after the fake vscode above is in place
    require('../../src/vscode/sweeps/panel') as typeof import('../../src/vscode/sweeps/panel');
  const types: Record<string, string> = { '.js': 'text/javascript', '.css': 'text/css' };
  server = http.createServer((req, res) => {
    const file = /^\/(sweep\.(js|css))$/.exec(req.url ?? '')?.[1];
    if (file) {
      res.writeHead(200, { 'content-type': types[path.extname(file)] }).end(readFileSync(path.join(webRoot, file)));
      return;
    }
    const webview = {
      cspSource: base,
      asWebviewUri: (u: { fsPath: string }) => ({ toString: () => `${base}/${path.basename(u.fsPath)}` }),
    };
    res.writeHead(200, { 'content-type': 'text/html' }).end(sweepHtml(webview as never, fake.Uri.file(tmp) as never));
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

const status = toSweepStatus(
  JSON.parse(readFileSync(path.join(root, 'test', 'unit', 'fixtures', 'sweeps', 'sweep-status.json'), 'utf8')),
);

async function open(): Promise<Page & { refused: string[] }> {
  const page = (await browser.newPage()) as Page & { refused: string[] };
  page.refused = [];
  page.on('console', (m) => /Content.Security.Policy|Refused/i.test(m.text()) && page.refused.push(m.text()));
  await page.addInitScript(`
    window.__sent = [];
    window.acquireVsCodeApi = () => ({ postMessage: (m) => window.__sent.push(m), getState: () => null, setState: () => {} });
  `);
  await page.goto(base);
  await page.waitForFunction(() =>
    (globalThis as unknown as { __sent: { type: string }[] }).__sent.some((m) => m.type === 'ready'),
  );
  return page;
}
const post = (page: Page, s: SweepPanelState) =>
  page.evaluate(
    (st) =>
      (globalThis as unknown as { postMessage(m: unknown, o: string): void }).postMessage(
        { type: 'state', state: st },
        '*',
      ),
    s,
  );
const sent = (page: Page) => page.evaluate(() => (globalThis as unknown as { __sent: unknown[] }).__sent);

test(
  'sweep panel: trials with the best highlighted, importances in order, one line per finished trial',
  { timeout: 60_000 },
  async () => {
    const page = await open();
    await post(page, { target: 'this machine', status, error: null });
    await page.locator('#trials tbody tr').first().waitFor();

    const rows = page.locator('#trials tbody tr');
    assert.equal(await rows.count(), status.trials.length);
    const best = page.locator('#trials tbody tr.best');
    assert.equal(await best.count(), 1, 'exactly one row is the best');
    assert.equal(await best.getAttribute('data-number'), String(status.best!.number));
    const pruned = status.trials.find((t) => t.state === 'PRUNED')!;
    const prunedRow = page.locator(`#trials tbody tr[data-number="${pruned.number}"]`);
    assert.match((await prunedRow.textContent()) ?? '', /pruned/);
    assert.ok(
      (await prunedRow.locator('td').allTextContents()).includes(String(pruned.pruned_at)),
      'its pruned-at epoch',
    );

    // Importance bars: most important first, widths falling.
    const expected = Object.entries(status.importances!)
      .sort((a, b) => b[1] - a[1])
      .map(([k]) => k);
    const bars = page.locator('#importances .bar');
    assert.deepEqual(await bars.evaluateAll((bs) => bs.map((b) => (b as HTMLElement).dataset.param)), expected);
    const widths = await bars.evaluateAll((bs) => bs.map((b) => b.getBoundingClientRect().width));
    assert.ok(widths[0] > widths[1], `bars in order of importance: ${widths.join(', ')}`);

    // Parallel coordinates: one polyline per finished trial with a value (completed, and pruned ones by their best epoch).
    const finished = status.trials.filter(
      (t) => t.state === 'COMPLETE' || (t.state === 'PRUNED' && t.reported.some(([, v]) => v !== null)),
    );
    const lines = page.locator('#parallel polyline');
    assert.equal(await lines.count(), finished.length);
    assert.deepEqual(
      (await lines.evaluateAll((ls) => ls.map((l) => Number(l.getAttribute('data-number'))))).sort(),
      finished.map((t) => t.number).sort(),
    );
    assert.equal(
      await page.locator('#parallel polyline.best').getAttribute('data-number'),
      String(status.best!.number),
    );
    // one axis per parameter and one for the objective
    assert.equal(await page.locator('#parallel line.axis').count(), Object.keys(status.trials[0].params).length + 1);

    // A completed sweep has no Stop button; Fine-tune from best posts its message.
    assert.equal(await page.locator('#stop').count(), 0);
    await page.locator('#fine-tune-best').click();
    const last = (await sent(page)).at(-1);
    assert.deepEqual(validateSweepUiMessage(last), { type: 'fineTuneBest' });
    // Runs Table opens the table of this sweep's trials (the host scopes it: test/unit/runs/sweepTable.test.ts).
    await page.locator('#open-table').click();
    assert.deepEqual(validateSweepUiMessage((await sent(page)).at(-1)), { type: 'openTable' });
    assert.deepEqual(page.refused, [], 'nothing refused by the Content-Security-Policy');
    await page.close();
  },
);

test(
  'sweep panel: a running sweep before any completed trial says so, and offers Stop',
  { timeout: 60_000 },
  async () => {
    const page = await open();
    const early = {
      ...status,
      state: 'running' as const,
      best: null,
      importances: null,
      trials: status.trials.slice(0, 2).map((t) => ({ ...t, state: 'RUNNING' as const, value: null, outcome: null })),
    };
    await post(page, { target: 'this machine', status: early, error: 'sweep-status: timed out' });
    await page.locator('#stop').waitFor();
    assert.match((await page.locator('#importances').textContent()) ?? '', /two trials have completed/);
    assert.equal(await page.locator('#parallel polyline').count(), 0);
    assert.equal(await page.locator('#trials tbody tr.best').count(), 0);
    assert.match((await page.locator('#error').textContent()) ?? '', /timed out/);
    await page.locator('#stop').click();
    assert.deepEqual((await sent(page)).at(-1), { type: 'stop' });
    await page.close();
  },
);
