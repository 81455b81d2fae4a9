// The Sweep panel UI (webview/sweep) in a real headless Chromium (playwright-core + Debian's
// /usr/bin/chromium), behind the host's own page and Content-Security-Policy (sweepHtml,
// src/vscode/sweeps/panel.ts), drawing a recorded real sweep-status (test/unit/fixtures/sweeps: 4
// trials of the demo shapes on CPU, 3 completed, 1 pruned): the best trial's row is highlighted, the
// importance bars are in Optuna's order, and the parallel-coordinates chart has one line per
// finished trial with a value; its buttons post the typed messages.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { toSweepStatus } from '../../src/core/sweeps/client';
import { validateSweepUiMessage, type SweepPanelState } from '../../src/shared/sweepProtocol';
import { openWebview, postState, sentMessages, serveWebview, type WebviewHost } from './support';

const root = path.join(__dirname, '..', '..');
let web: WebviewHost;

before(async () => {
  const { sweepHtml } =
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- after the fake vscode (./support) is in place
    require('../../src/vscode/sweeps/panel') as typeof import('../../src/vscode/sweeps/panel');
  web = await serveWebview({ name: 'sweep', html: (w, u) => sweepHtml(w, u) });
});
after(() => web?.close());

const status = toSweepStatus(
  JSON.parse(readFileSync(path.join(root, 'test', 'unit', 'fixtures', 'sweeps', 'sweep-status.json'), 'utf8')),
);

const open = () => openWebview(web);
const post = (page: Page, s: SweepPanelState) => postState(page, s);
const sent = sentMessages;

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
