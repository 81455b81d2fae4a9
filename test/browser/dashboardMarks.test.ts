// The dashboard of a run with issue 19's knobs, in a real Chromium behind the real browser server:
// a recorded CPU run (test/unit/fixtures/dashboard/knobs-run.jsonl: gradual unfreezing at epoch 3,
// the plateau schedule lowering the rate, weight EMA) shows its `unfreeze` and `lr_reduced` events
// as labelled markers on the loss and lr charts, and the EMA weights' val accuracy as its own line
// with a legend entry beside val acc.
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { startDashboardServer, type DashboardServer } from '../../src/core/dashboard/server';
import { buildWebview, launchChromium } from './support';

const ROOT = path.resolve(__dirname, '..', '..');
const OUT = path.join(ROOT, 'test-output', 'browser');
const FIXTURE = path.join(ROOT, 'test', 'unit', 'fixtures', 'dashboard', 'knobs-run.jsonl');

interface Ev {
  type: string;
  step?: number;
  lr?: number;
  previous_lr?: number;
  unfrozen?: string[];
  val_acc?: number;
  ema?: { val_acc: number } | null;
}
const events = readFileSync(FIXTURE, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l) as Ev);

const tmp = mkdtempSync(path.join(tmpdir(), 'dash-marks-'));
let srv: DashboardServer;
let browser: Browser;
const pageErrors: string[] = [];

before(async () => {
  mkdirSync(OUT, { recursive: true });
  const assets = path.join(tmp, 'assets');
  await buildWebview('dashboard', path.join(assets, 'dashboard.js'));
  const runDir = path.join(tmp, 'runs', '20261203-135628-knobs-markers-b70a');
  mkdirSync(runDir, { recursive: true });
  cpSync(FIXTURE, path.join(runDir, 'events.jsonl'));
  srv = await startDashboardServer({ path: path.join(tmp, 'runs'), assetsDir: assets, rescanMs: 100 });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await srv?.close();
  rmSync(tmp, { recursive: true, force: true });
});

async function openRun(): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1200, height: 1600 } });
  page.on('pageerror', (e) => pageErrors.push(e.message));
  const key = srv.runs()[0].key;
  await page.goto(`${srv.url}&run=${key}`);
  await page.waitForFunction(
    () =>
      document.querySelectorAll('[data-chart="loss"] .event-mark').length > 0 &&
      ((
        window as unknown as { __ascendDashboard?: { chartData(id: string): unknown[] | null } }
      ).__ascendDashboard?.chartData('accuracy')?.length ?? 0) > 0,
    null,
    { timeout: 60_000, polling: 50 },
  );
  return page;
}

/** The markers drawn over one chart: their label, step and whether they show. */
function marksOf(page: Page, chart: string) {
  return page.$$eval(`[data-chart="${chart}"] .event-mark`, (els) =>
    els.map((e) => ({
      kind: (e as HTMLElement).dataset.kind,
      label: e.textContent,
      step: Number((e as HTMLElement).dataset.step),
      shown: !(e as HTMLElement).hidden && (e as HTMLElement).getBoundingClientRect().height > 0,
    })),
  );
}

test('unfreeze and lr_reduced are labelled markers at their steps on the loss and lr charts', async () => {
  const unfreeze = events.filter((e) => e.type === 'unfreeze');
  const reduced = events.filter((e) => e.type === 'lr_reduced');
  assert.ok(unfreeze.length >= 1 && reduced.length >= 1, 'the fixture has both events');
  const page = await openRun();
  // In the log's order (several may share a step: a plateau at an epoch's end, the next epoch unfreezing).
  const expected = events
    .filter((e) => e.type === 'unfreeze' || e.type === 'lr_reduced')
    .map((e) =>
      e.type === 'unfreeze'
        ? { kind: 'unfreeze', label: `unfreeze ${e.unfrozen!.join('+')}`, step: e.step }
        : {
            kind: 'lr_reduced',
            label: `lr ${Number(e.previous_lr!.toPrecision(3))}→${Number(e.lr!.toPrecision(3))}`,
            step: e.step,
          },
    );
  for (const chart of ['loss', 'lr']) {
    const marks = await marksOf(page, chart);
    assert.deepEqual(
      marks.map(({ kind, label, step }) => ({ kind, label, step })),
      expected,
      chart,
    );
    assert.ok(
      marks.every((m) => m.shown),
      `${chart}: every marker is drawn`,
    );
  }
  // Placed at their steps: left to right in step order, the same step at the same x, labels of
  // the same step stacked rather than drawn over each other.
  const boxes = await page.$$eval('[data-chart="loss"] .event-mark', (els) =>
    els.map((e) => ({
      left: e.getBoundingClientRect().left,
      labelTop: e.firstElementChild!.getBoundingClientRect().top,
    })),
  );
  for (let i = 1; i < boxes.length; i++) {
    const sameStep = expected[i].step === expected[i - 1].step;
    if (sameStep) {
      assert.ok(Math.abs(boxes[i].left - boxes[i - 1].left) < 1, `marks ${i - 1} and ${i} share an x`);
      assert.notEqual(boxes[i].labelTop, boxes[i - 1].labelTop, 'their labels do not overlap');
    } else assert.ok(boxes[i].left > boxes[i - 1].left, `mark ${i} is right of mark ${i - 1}`);
  }
  await page.locator('[data-chart="loss"]').screenshot({ path: path.join(OUT, 'marks-loss.png') });
  await page.close();
  assert.deepEqual(pageErrors, []);
});

test("the EMA weights' val accuracy is its own line beside val acc, with a legend entry", async () => {
  const evals = events.filter((e) => e.type === 'eval');
  const page = await openRun();
  const acc = (await page.evaluate(() =>
    (
      window as unknown as { __ascendDashboard: { chartData(id: string): (number | null)[][] | null } }
    ).__ascendDashboard.chartData('accuracy'),
  ))!;
  const pct = (v: number) => Number((v * 100).toFixed(6));
  assert.deepEqual(
    acc[1].map((v) => Number(v!.toFixed(6))),
    evals.map((e) => pct(e.val_acc!)),
    'val acc',
  );
  assert.deepEqual(
    acc[3].map((v) => (v === null ? null : Number(v.toFixed(6)))),
    evals.map((e) => (e.ema ? pct(e.ema.val_acc) : null)),
    'EMA val acc, per eval',
  );
  assert.ok(
    evals.some((e) => e.ema),
    'the fixture evaluates the EMA weights',
  );
  const legend = await page.locator('[data-chart="accuracy"] .u-legend .u-series .u-label').allTextContents();
  assert.ok(legend.includes('EMA val acc %'), legend.join(', '));
  await page.locator('[data-chart="accuracy"]').screenshot({ path: path.join(OUT, 'marks-ema-accuracy.png') });
  await page.close();
  assert.deepEqual(pageErrors, []);
});
