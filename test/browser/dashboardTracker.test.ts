// The dashboard as a tracker (issue 20), in a real Chromium behind the real browser server, on two
// REAL finished CPU runs of the runner (resnet18 at 32 px on the demo shapes, O0, host telemetry
// every 0.3 s; they differ in the learning rate, and one is renamed with `meta --name`): the config
// panel, the log-scale toggle, the epoch x axis, the train accuracy line, the host charts in the NPU
// charts' place, the O0 run's one-line loss-scale card, series toggles, and Compare Runs' labels and
// per-run visibility. Screenshots go to test-output/browser/.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { startDashboardServer, type DashboardServer } from '../../src/core/dashboard/server';
import { runRunner } from '../../src/core/targets/runnerCli';
import { buildWebview, launchChromium, makeDemoData, RUNNER } from './support';

const ROOT = path.resolve(__dirname, '..', '..');
const OUT = path.join(ROOT, 'test-output', 'browser');

interface Ev {
  type: string;
  step?: number;
  train_acc?: number;
  rss_mb?: number;
}

function events(runDir: string): Ev[] {
  return readFileSync(path.join(runDir, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Ev);
}

type Dash = {
  chartData(id: string): (number | null)[][] | null;
  charts(): string[];
  scales(id: string): Record<string, { distr: number; min: number | null; max: number | null }> | null;
  shown(id: string): Record<string, boolean> | null;
  xLabels(id: string): string[] | null;
  notes(): Record<string, string | null>;
};
/** Calls one of the page's test hooks (window.__ascendDashboard) with an argument. */
function dash<M extends keyof Dash>(page: Page, method: M, arg = ''): Promise<ReturnType<Dash[M]>> {
  return page.evaluate(
    ([m, a]) =>
      (window as unknown as { __ascendDashboard: Record<string, (x: string) => unknown> }).__ascendDashboard[m](a),
    [method, arg] as const,
  ) as Promise<ReturnType<Dash[M]>>;
}

describe('the dashboard as a tracker, on real CPU runs', { timeout: 900_000 }, () => {
  const tmp = mkdtempSync(path.join(tmpdir(), 'dash-tracker-'));
  const runsRoot = path.join(tmp, 'runs');
  let srv: DashboardServer;
  let browser: Browser;
  const pageErrors: string[] = [];
  const runDirs: Record<'a' | 'b', string> = { a: path.join(runsRoot, 'run-a'), b: path.join(runsRoot, 'run-b') };

  before(async () => {
    mkdirSync(OUT, { recursive: true });
    const assets = path.join(tmp, 'assets');
    await buildWebview('dashboard', path.join(assets, 'dashboard.js'));
    const train = await makeDemoData(path.join(tmp, 'data'), 16);
    mkdirSync(runsRoot);
    const spec = (name: string, lr: number) => ({
      name,
      data: { train: train, image_size: 32, batch_size: 8, workers: 1, val_split: 0.25 },
      model: { backbone: 'resnet18', freeze: 'none' },
      train: { epochs: 3, lr },
      amp: { level: 'O0', loss_scale: 'none' },
      checkpoint: { every_steps: 1000 },
      device: { target: 'CPU', telemetry_s: 0.3 },
    });
    // The two runs one after the other (2 cores): each a real `train` into its run directory.
    for (const [k, lr] of [
      ['a', 0.02],
      ['b', 0.002],
    ] as const) {
      writeFileSync(path.join(tmp, `${k}.json`), JSON.stringify(spec(`tracker-${k}`, lr)));
      await runRunner(RUNNER, ['train', path.join(tmp, `${k}.json`), '--run-dir', runDirs[k]], { timeoutMs: 400_000 });
    }
    // A display name given after the fact (Rename Run writes meta.json through the runner's `meta`).
    await runRunner(RUNNER, ['meta', runDirs.b, '--name', 'slow lr']);
    srv = await startDashboardServer({ path: runsRoot, assetsDir: assets, rescanMs: 100 });
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await srv?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  async function open(query: string): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1200, height: 1800 } });
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.goto(`${srv.url}${query}`);
    await page.waitForFunction(
      () =>
        ((window as unknown as { __ascendDashboard?: Dash }).__ascendDashboard?.chartData('loss')?.[0].length ?? 0) > 0,
      null,
      { timeout: 60_000, polling: 50 },
    );
    return page;
  }

  const keyOf = (k: 'a' | 'b') => srv.runs().find((r) => r.runId === path.basename(runDirs[k]))!.key;

  test('the config panel shows the run’s resolved spec, weights and versions', async () => {
    const page = await open(`&run=${keyOf('a')}`);
    await page.locator('vscode-tab-header[data-tab="config"]').click();
    const value = (p: string) => page.locator(`[data-config="spec"] tr[data-path="${p}"] td`).textContent();
    assert.equal(await value('train.lr'), '0.02');
    assert.equal(await value('model.backbone'), 'resnet18');
    assert.match((await page.locator('[data-config="spec"] caption').textContent()) ?? '', /spec\.json/);
    assert.match((await page.locator('[data-config="weights"]').textContent()) ?? '', /random initialisation/);
    const versions = await page.locator('[data-config="versions"] tbody tr').allTextContents();
    assert.ok(
      versions.some((v) => /^mindspore\d+\.\d+/.test(v)),
      versions.join(' | '),
    );
    assert.ok(
      versions.some((v) => /^device\.targetCPU/.test(v)),
      versions.join(' | '),
    );
    // the filter narrows the spec's rows
    await page.locator('#config-filter').fill('backbone');
    const shown = await page.locator('[data-config="spec"] tbody tr:not([hidden])').allTextContents();
    const all = await page.locator('[data-config="spec"] tbody tr').count();
    assert.ok(shown.includes('model.backboneresnet18') && shown.length < all, shown.join(' | '));
    assert.ok(
      shown.every((r) => r.includes('backbone')),
      shown.join(' | '),
    );
    await page.screenshot({ path: path.join(OUT, 'tracker-config.png'), fullPage: true });
    await page.close();
  });

  test('the log-scale toggle turns the loss axis logarithmic, and back', async () => {
    const page = await open(`&run=${keyOf('a')}`);
    assert.equal((await dash(page, 'scales', 'loss'))!.y.distr, 1);
    await page.locator('input[data-log="loss"]').focus();
    await page.keyboard.press('Space'); // keyboard reachable
    await page.waitForFunction(
      () => (window as unknown as { __ascendDashboard: Dash }).__ascendDashboard.scales('loss')?.y.distr === 3,
    );
    const y = (await dash(page, 'scales', 'loss'))!.y;
    assert.ok(y.min! > 0, 'a log axis starts above 0');
    assert.equal((await dash(page, 'scales', 'lr'))!.y.distr, 1, 'only the chart toggled');
    await page.locator('[data-chart-card="loss"]').screenshot({ path: path.join(OUT, 'tracker-loss-log.png') });
    await page.locator('input[data-log="loss"]').uncheck();
    await page.waitForFunction(
      () => (window as unknown as { __ascendDashboard: Dash }).__ascendDashboard.scales('loss')?.y.distr === 1,
    );
    await page.close();
  });

  test('the x axis reads epochs, ticks on whole epochs', async () => {
    const page = await open(`&run=${keyOf('a')}`);
    const stepLabels = (await dash(page, 'xLabels', 'loss'))!;
    await page.locator('#x-axis').selectOption('epoch');
    await page.waitForFunction(
      () => (window as unknown as { __ascendDashboard: Dash }).__ascendDashboard.xLabels('loss')?.join(',') === '1,2,3',
      null,
      { timeout: 10_000 },
    );
    assert.notDeepEqual(stepLabels, ['1', '2', '3']);
    // every step chart follows the same axis
    assert.deepEqual(await dash(page, 'xLabels', 'lr'), ['1', '2', '3']);
    await page.locator('[data-chart-card="loss"]').screenshot({ path: path.join(OUT, 'tracker-epoch-axis.png') });
    await page.locator('#x-axis').selectOption('step');
    await page.close();
  });

  test('train accuracy from the train step is drawn beside val accuracy', async () => {
    const steps = events(runDirs.a).filter((e) => e.type === 'step');
    assert.ok(steps.every((e) => typeof e.train_acc === 'number'));
    const page = await open(`&run=${keyOf('a')}`);
    await page.locator('#smoothing').fill('0'); // raw values: exactly the events'
    await page.waitForFunction(() => (document.querySelector('output[for="smoothing"]')?.textContent ?? '') === '0.00');
    const acc = (await dash(page, 'chartData', 'accuracy'))!;
    const series = Object.keys((await dash(page, 'shown', 'accuracy')) ?? {});
    const col = series.indexOf('train acc %') + 1;
    assert.ok(col > 0, series.join(', '));
    const drawn = acc[col].filter((v): v is number => v !== null).map((v) => Number(v.toFixed(6)));
    assert.deepEqual(
      drawn,
      steps.map((e) => Number((e.train_acc! * 100).toFixed(6))),
    );
    assert.ok(
      acc[1].some((v) => v !== null),
      'val accuracy still drawn',
    );
    await page.locator('[data-chart-card="accuracy"]').screenshot({ path: path.join(OUT, 'tracker-train-acc.png') });
    // its checkbox hides it (and only it)
    await page.locator('[data-chart-card="accuracy"] input[data-series="train acc %"]').uncheck();
    const shown = (await dash(page, 'shown', 'accuracy'))!;
    assert.equal(shown['train acc %'], false);
    assert.equal(shown['val acc %'], true);
    await page.locator('[data-chart-card="accuracy"] input[data-series="train acc %"]').check();
    await page.close();
  });

  test('a CPU run shows host CPU, memory and RSS where the NPU charts would be', async () => {
    const hosts = events(runDirs.a).filter((e) => e.type === 'host');
    assert.ok(hosts.length >= 2, `host events: ${hosts.length}`);
    const page = await open(`&run=${keyOf('a')}`);
    const charts = await dash(page, 'charts');
    assert.ok(charts.includes('hostCpu') && charts.includes('hostMem'), charts.join(','));
    assert.ok(!charts.includes('npu') && !charts.includes('hbm'), charts.join(','));
    const mem = (await dash(page, 'chartData', 'hostMem'))!;
    assert.deepEqual(
      mem[3].map((v) => Number(v!.toFixed(6))),
      hosts.map((e) => Number((e.rss_mb! / 1024).toFixed(6))),
      'RSS in GB, one point per host event',
    );
    await page.locator('[data-chart-card="hostMem"]').screenshot({ path: path.join(OUT, 'tracker-host.png') });
    await page.close();
  });

  test('an O0 run says in one line that loss scaling does not apply', async () => {
    const page = await open(`&run=${keyOf('a')}`);
    const line = await page.locator('[data-field="amp-not-applicable"]').textContent();
    assert.match(line ?? '', /^Loss scaling does not apply: O0 trains in full precision/);
    const notes = await dash(page, 'notes');
    assert.match(notes.lossScale ?? '', /does not apply/);
    assert.equal(await page.locator('[data-chart="lossScale"]').isHidden(), true, 'no empty chart');
    await page.close();
  });

  test('Compare Runs labels runs by display name and differing setting, and hides a run on request', async () => {
    const page = await open(`&compare=${keyOf('a')},${keyOf('b')}`);
    const labels = Object.keys((await dash(page, 'shown', 'loss'))!);
    assert.deepEqual(labels.sort(), ['slow lr (lr=0.002)', 'tracker-a (lr=0.02)']);
    const differs = await page.locator('.compare-runs [data-field="differs"]').allTextContents();
    assert.deepEqual(differs.sort(), ['train.lr=0.002', 'train.lr=0.02']);
    await page.locator(`input[data-run="${keyOf('b')}"]`).uncheck();
    for (const id of ['loss', 'accuracy']) {
      const shown = (await dash(page, 'shown', id))!;
      assert.deepEqual(shown, { 'tracker-a (lr=0.02)': true, 'slow lr (lr=0.002)': false }, id);
    }
    await page.screenshot({ path: path.join(OUT, 'tracker-compare-hidden.png'), fullPage: true });
    // log scale in Compare Runs too
    await page.locator('input[data-log="loss"]').check();
    await page.waitForFunction(
      () => (window as unknown as { __ascendDashboard: Dash }).__ascendDashboard.scales('loss')?.y.distr === 3,
    );
    // the hidden run stays hidden through the rebuild
    assert.equal((await dash(page, 'shown', 'loss'))!['slow lr (lr=0.002)'], false);
    // the config diff: the one differing field, one column per run, the equal ones a click away
    await page.locator('vscode-tab-header[data-tab="config"]').click();
    const diff = page.locator('[data-config="diff"]');
    const paths = () => diff.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-path')));
    assert.deepEqual(await paths(), ['train.lr']);
    assert.deepEqual(await diff.locator('thead th[data-run]').allTextContents(), ['tracker-a', 'slow lr']);
    assert.deepEqual(await diff.locator('tr[data-path="train.lr"] td').allTextContents(), ['0.02', '0.002']);
    await page.locator('#config-diff-all').check();
    const all = await paths();
    assert.ok(all.includes('train.epochs') && all.includes('model.backbone'), all.join());
    assert.deepEqual(await diff.locator('tr[data-path="train.epochs"] td').allTextContents(), ['3', '3']);
    assert.deepEqual(await diff.locator('tbody tr.differs').evaluateAll((t) => t.map((r) => r.dataset.path)), [
      'train.lr',
    ]);
    await page.screenshot({ path: path.join(OUT, 'tracker-compare-config-diff.png'), fullPage: true });
    await page.close();
    assert.deepEqual(pageErrors, []);
  });
});
