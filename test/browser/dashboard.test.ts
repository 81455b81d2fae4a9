// The dashboard UI in a real headless Chromium (playwright-core + Debian's /usr/bin/chromium), served
// by the real `dashboard` server, watching REAL live CPU runs of the runner: resnet18 at 32 px on a
// tiny generated image set, AMP O2 with the dynamic loss scale's 2^24 default (which overflows at
// the start on CPU, so the loss-scale chart has overflow markers). One class folder is named like an
// HTML injection; it must come out as text. Screenshots go to test-output/browser/.
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import NodeWebSocket from 'ws';
import { startDashboardServer, type DashboardServer } from '../../src/core/dashboard/server';
import { reasonText } from '../../src/core/runs/runnerCodes';
import { runnerErrorText } from '../../src/core/runs/runnerErrors';
import { launchRun } from '../../src/core/targets/runnerCli';
import { buildWebview, launchChromium, makeDemoData, RUNNER } from './support';

const ROOT = path.resolve(__dirname, '..', '..');
const OUT = path.join(ROOT, 'test-output', 'browser');
const HOSTILE = '<img src=x onerror=window.__xss=1>';

interface RunEventLite {
  type: string;
  overflow?: boolean;
  status?: string;
  best?: { metrics: { val_acc?: number } } | null;
}

function events(runDir: string): RunEventLite[] {
  const file = path.join(runDir, 'events.jsonl');
  if (!existsSync(file)) return [];
  const text = readFileSync(file, 'utf8');
  return text
    .slice(0, text.lastIndexOf('\n') + 1)
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as RunEventLite);
}

/** Waits for a condition in Node (files on disk); fails with `what` after the timeout. */
async function until<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 120_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** Non-null values of one series (column `col`) of a chart, as uPlot holds them. */
function seriesPoints(page: Page, chart: string, col: number): Promise<number> {
  return page.evaluate(
    ([id, c]) => {
      const d = (
        window as unknown as { __ascendDashboard?: { chartData(id: string): (number | null)[][] | null } }
      ).__ascendDashboard?.chartData(id as string);
      return d ? d[c as number].filter((v) => v !== null).length : 0;
    },
    [chart, col] as const,
  );
}

function spec(name: string, train: string, epochs: number, lr = 0.01): object {
  return {
    name,
    data: { train, image_size: 32, batch_size: 16, workers: 2 },
    model: { backbone: 'resnet18', freeze: 'none' },
    train: { epochs, lr },
    // The recipe's O2 with a dynamic loss scale from 2^24: fp16 gradients overflow at first on CPU.
    amp: { level: 'O2', loss_scale: 'dynamic' },
    checkpoint: { every_steps: 1000 },
    device: { target: 'CPU' },
  };
}

describe('browser dashboard on live CPU runs', { timeout: 600_000 }, () => {
  const tmp = mkdtempSync(path.join(tmpdir(), 'dash-browser-'));
  const runsRoot = path.join(tmp, 'runs');
  const assets = path.join(tmp, 'assets');
  let srv: DashboardServer;
  let browser: Browser;
  let runA: { run_dir: string; pid: number; run_id: string };
  let runB: { run_dir: string; pid: number; run_id: string };
  const requests: string[] = [];
  const pageErrors: string[] = [];

  before(async () => {
    mkdirSync(OUT, { recursive: true });
    // The UI bundle from the current sources, the way esbuild.mjs builds dist/webview.
    await buildWebview('dashboard', path.join(assets, 'dashboard.js'));
    const train = await makeDemoData(path.join(tmp, 'data'), 24);
    // A class whose folder name is an HTML injection (Linux allows every character but '/').
    renameSync(path.join(train, 'red circle'), path.join(train, HOSTILE));
    writeFileSync(path.join(tmp, 'a.json'), JSON.stringify(spec('live <b>A</b>', train, 3)));
    writeFileSync(path.join(tmp, 'b.json'), JSON.stringify(spec('second', train, 1, 0.05)));

    mkdirSync(runsRoot);
    // No NPU here: run A gets a fake `npu-smi` that prints a recorded 8x 910B3 table (the runner's
    // own fixture), so a runner that samples npu-smi writes real `device` events for the NPU charts.
    const bin = path.join(tmp, 'bin');
    mkdirSync(bin);
    const recorded = readFileSync(
      path.join(ROOT, 'test', 'runner', 'device', 'fixtures', 'npu-smi', 'info_910b3_8npu_processes.txt'),
      'utf8',
    );
    writeFileSync(path.join(bin, 'npu-smi.txt'), recorded.replace(/^# source:.*\n/, ''));
    writeFileSync(path.join(bin, 'npu-smi'), '#!/bin/sh\nexec cat "$(dirname "$0")/npu-smi.txt"\n', { mode: 0o755 });

    srv = await startDashboardServer({ path: runsRoot, assetsDir: assets, rescanMs: 100 });
    browser = await launchChromium();
    runA = await launchRun(
      { ...RUNNER, env: { PATH: `${bin}${path.delimiter}${process.env.PATH}` } },
      path.join(tmp, 'a.json'),
      runsRoot,
    );
    await until('run A listed', () => srv.runs().length >= 1, 10_000);
  });

  after(async () => {
    await browser?.close();
    await srv?.close();
    for (const r of [runA, runB]) {
      // Only a run cut short by a failed test is still training.
      if (!r || events(r.run_dir).some((e) => e.type === 'run_finished')) continue;
      try {
        process.kill(r.pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    // The training processes write until they exit: wait, then remove their folders.
    for (const r of [runA, runB]) if (r) await until(`pid ${r.pid} gone`, () => !alive(r.pid), 30_000).catch(() => {});
    rmSync(tmp, { recursive: true, force: true });
  });

  async function openPage(query: string, colorScheme: 'dark' | 'light' = 'dark'): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1200, height: 1800 }, colorScheme });
    page.on('request', (r) => requests.push(r.url()));
    page.on('websocket', (ws) => requests.push(ws.url()));
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') pageErrors.push(m.text());
    });
    await page.goto(`${srv.url}${query}`);
    return page;
  }

  test('the loss chart gains points while the run trains, and the final accuracy shows', async () => {
    const key = srv.runs().find((r) => r.runId === runA.run_id)!.key;
    const page = await openPage(`&run=${key}`);
    // Seen live: some steps drawn while the run is still running (and more later).
    await page.waitForFunction(
      () => {
        const d = (window as unknown as { __ascendDashboard?: { chartData(id: string): (number | null)[][] | null } })
          .__ascendDashboard;
        const loss = d?.chartData('loss')?.[1].filter((v) => v !== null).length ?? 0;
        return loss >= 1 && document.querySelector('[data-state="running"]') !== null;
      },
      null,
      { timeout: 180_000, polling: 50 },
    );
    const early = await seriesPoints(page, 'loss', 1);
    const stepsOnDiskEarly = events(runA.run_dir).filter((e) => e.type === 'step').length;
    await page.screenshot({ path: path.join(OUT, 'live-running.png'), fullPage: true });

    // Later: more points than before, still while it runs or once done.
    await page.waitForFunction(
      (n) => {
        const d = (window as unknown as { __ascendDashboard?: { chartData(id: string): (number | null)[][] | null } })
          .__ascendDashboard;
        return (d?.chartData('loss')?.[1].filter((v) => v !== null).length ?? 0) > n;
      },
      early,
      { timeout: 180_000, polling: 50 },
    );

    await until('run A finished', () => events(runA.run_dir).some((e) => e.type === 'run_finished'), 300_000);
    const evs = events(runA.run_dir);
    const steps = evs.filter((e) => e.type === 'step');
    const finished = evs.find((e) => e.type === 'run_finished')!;
    assert.equal(finished.status, 'completed');
    assert.ok(
      early < steps.length,
      `the page showed ${early} of ${steps.length} steps while running (disk had ${stepsOnDiskEarly})`,
    );

    await waitCompleted(page);
    await page.waitForFunction(
      (n) => {
        const d = (window as unknown as { __ascendDashboard?: { chartData(id: string): (number | null)[][] | null } })
          .__ascendDashboard;
        return d?.chartData('loss')?.[1].filter((v) => v !== null).length === n;
      },
      steps.length,
      { timeout: 30_000 },
    );

    // The final accuracy, as the runner reported it, in the header and the final status.
    const acc = finished.best?.metrics.val_acc;
    assert.equal(typeof acc, 'number', 'run_finished.best has val_acc');
    const shown = `${((acc as number) * 100).toFixed(1)}%`;
    await page.locator('[data-field="best"] .field-value', { hasText: shown }).waitFor({ timeout: 10_000 });
    assert.match(
      await page.locator('section.final').innerText(),
      new RegExp(`Run completed\\.[\\s\\S]*${shown.replace('.', '\\.')}`),
    );

    // Top-5 beside val acc on the accuracy chart: each eval's val_top5 in per cent (4 classes: 100).
    const top5 = evs.filter((e) => e.type === 'eval').map((e) => (e as { val_top5?: number }).val_top5! * 100);
    assert.ok(top5.length > 0 && top5.every((v) => v === 100), JSON.stringify(top5));
    const accuracy = await page.evaluate(() =>
      (
        window as unknown as { __ascendDashboard: { chartData(id: string): (number | null)[][] | null } }
      ).__ascendDashboard.chartData('accuracy'),
    );
    // (the chart's x also has the step rows of the train accuracy line: the evals' rows are the non-null ones)
    assert.deepEqual(
      accuracy?.[2].filter((v) => v !== null),
      top5,
    );

    // Loss scale: one marker per overflowed step, on the scale the step ended with.
    const overflows = steps.filter((e) => e.overflow).length;
    assert.ok(overflows >= 1, 'O2 with 2^24 overflows at the start on CPU');
    await page.waitForFunction(
      (n) => {
        const d = (window as unknown as { __ascendDashboard?: { chartData(id: string): (number | null)[][] | null } })
          .__ascendDashboard;
        return d?.chartData('lossScale')?.[2].filter((v) => v !== null).length === n;
      },
      overflows,
      { timeout: 10_000 },
    );
    assert.equal(await seriesPoints(page, 'lossScale', 1), steps.length, 'a loss scale per step');
    assert.match(
      await page.locator('[data-field="overflows-total"] .field-value').innerText(),
      new RegExp(`^${overflows}$`),
    );
    await page.screenshot({ path: path.join(OUT, 'completed-dark.png'), fullPage: true });
    await page.locator('[data-chart="lossScale"]').screenshot({ path: path.join(OUT, 'loss-scale-overflows.png') });

    // NPU charts: one row per device event (NPU 0 of the recorded table: AICore 10 %, 40 °C,
    // HBM 57895 of 65536 MB, 121.6 W); without device events, the note that there are none.
    const devices = evs.filter((e) => e.type === 'device').length;
    if (devices > 0) {
      await page.waitForFunction(
        (n) => {
          const d = (window as unknown as { __ascendDashboard?: { chartData(id: string): (number | null)[][] | null } })
            .__ascendDashboard;
          return d?.chartData('npu')?.[1].filter((v) => v !== null).length === n;
        },
        devices,
        { timeout: 10_000 },
      );
      const npu = await page.evaluate(() => {
        const d = (window as unknown as { __ascendDashboard: { chartData(id: string): (number | null)[][] | null } })
          .__ascendDashboard;
        return {
          util: d.chartData('npu')![1],
          temp: d.chartData('npu')![2],
          hbm: d.chartData('hbm')![1],
          power: d.chartData('hbm')![3],
        };
      });
      assert.ok(npu.util.every((v) => v === 10) && npu.temp.every((v) => v === 40), JSON.stringify(npu));
      // Drawn, not only held: the chart has the device's series (they appear with its first sample).
      assert.match(await page.locator('[data-chart="npu"] .u-legend').innerText(), /NPU 0 util %[\s\S]*NPU 0 °C/);
      assert.match(await page.locator('[data-chart="hbm"] .u-legend').innerText(), /NPU 0 HBM used[\s\S]*NPU 0 W/);
      assert.ok(
        npu.hbm.every((v) => Math.abs(v! - 57895 / 1024) < 1e-9) && npu.power.every((v) => v === 121.6),
        JSON.stringify(npu),
      );
      await page.locator('[data-chart="npu"]').screenshot({ path: path.join(OUT, 'npu-telemetry.png') });
    } else {
      await page.locator('.chart-note', { hasText: 'No NPU telemetry' }).first().waitFor({ timeout: 10_000 });
    }

    // The hostile class name is text in the per-class table; nothing ran, no <img> appeared.
    await page.locator('th.class-name', { hasText: HOSTILE }).first().waitFor({ timeout: 10_000 });
    assert.equal(await page.evaluate(() => document.querySelectorAll('#app img').length), 0);
    assert.equal(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss), undefined);
    assert.equal(await page.locator('h1.run-name').innerText(), 'live <b>A</b>', 'the run name is text too');
    await page.close();
  });

  test('light scheme and compare mode overlay two runs', async () => {
    runB = await launchRun(RUNNER, path.join(tmp, 'b.json'), runsRoot);
    await until('run B listed', () => srv.runs().length >= 2, 10_000);
    const keys = srv.runs().map((r) => r.key);
    const page = await openPage(`&compare=${keys.join(',')}`, 'light');
    await page.waitForFunction(
      () => (window as unknown as { __ascendDashboard?: { mode(): string } }).__ascendDashboard?.mode() === 'compare',
      null,
      { timeout: 30_000 },
    );
    await until('run B finished', () => events(runB.run_dir).some((e) => e.type === 'run_finished'), 300_000);
    const stepsB = events(runB.run_dir).filter((e) => e.type === 'step').length;
    // One smoothed loss series per run; run B's grows to its step count live.
    await page.waitForFunction(
      (n) => {
        const d = (
          window as unknown as { __ascendDashboard?: { chartData(id: string): (number | null)[][] | null } }
        ).__ascendDashboard?.chartData('loss');
        return (
          d !== null &&
          d !== undefined &&
          d.length === 3 &&
          d.slice(1).some((c) => c.filter((v) => v !== null).length === n)
        );
      },
      stepsB,
      { timeout: 60_000, polling: 100 },
    );
    assert.equal(await page.locator('.compare-runs li').count(), 2);
    await page.screenshot({ path: path.join(OUT, 'compare-light.png'), fullPage: true });
    await page.close();
  });

  test('CSV export downloads the series the page holds', async () => {
    const key = srv.runs().find((r) => r.runId === runA.run_id)!.key;
    const page = await browser.newPage({ acceptDownloads: true });
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(`${srv.url}&run=${key}`);
    await waitCompleted(page);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByText('Export CSV').click()]);
    const csv = readFileSync(await download.path(), 'utf8')
      .trim()
      .split('\n');
    const steps = events(runA.run_dir).filter((e) => e.type === 'step').length;
    assert.match(csv[0], /^step,loss,lr,loss_scale,overflow/);
    assert.equal(csv.length - 1, steps, 'one row per step (evals fall on step rows)');

    // A chart as PNG: the loss chart's canvas, downloaded.
    const [png] = await Promise.all([
      page.waitForEvent('download'),
      page.locator('[aria-label="Save Training loss chart as PNG"]').click(),
    ]);
    assert.match(png.suggestedFilename(), /-loss\.png$/);
    const bytes = readFileSync(await png.path());
    assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG file');
    assert.ok(bytes.length > 2000, `${bytes.length} bytes: a drawn chart, not an empty canvas`);
    await page.close();
  });

  test('in a VS Code webview (acquireVsCodeApi): messages by postMessage, exports go to the host, state by setState', async () => {
    const key = srv.runs().find((r) => r.runId === runA.run_id)!.key;
    // A real snapshot of run A, as the host would send it.
    const ws = new NodeWebSocket(`ws://127.0.0.1:${srv.port}/ws?token=${srv.token}&run=${key}`, {
      origin: `http://127.0.0.1:${srv.port}`,
    });
    const snapshot = await new Promise<unknown>((resolve, reject) => {
      ws.once('open', () => ws.send(JSON.stringify({ type: 'ready', width: 800 })));
      ws.on('message', (data) => {
        const m = JSON.parse(String(data)) as { type: string };
        if (m.type === 'snapshot') resolve(m);
      });
      ws.once('error', reject);
    });
    ws.close();

    const page = await browser.newPage({ acceptDownloads: true });
    const sockets: string[] = [];
    page.on('websocket', (w) => sockets.push(w.url()));
    page.on('request', (r) => requests.push(r.url()));
    // What VS Code provides a webview: acquireVsCodeApi() with postMessage, getState, setState.
    // (A string: tsx would wrap a function's inner functions in a helper the page does not have.)
    await page.addInitScript(`
      window.posted = [];
      window.acquireVsCodeApi = function () {
        return {
          postMessage: function (m) { window.posted.push(m); },
          getState: function () { return window.savedState; },
          setState: function (s) { window.savedState = s; },
        };
      };`);
    await page.goto(`${srv.url}&run=${key}`);
    await page.waitForFunction(() =>
      (window as unknown as { posted: { type: string }[] }).posted.some((m) => m.type === 'ready'),
    );
    await page.evaluate((m) => window.postMessage(m, '*'), snapshot);
    await waitCompleted(page);

    await page.getByText('Export CSV').click();
    await page.locator('[aria-label="Save Training loss chart as PNG"]').click();
    const exports = await page.evaluate(() =>
      (
        window as unknown as { posted: { type: string; format?: string; suggestedName?: string; data?: string }[] }
      ).posted
        .filter((m) => m.type === 'export')
        .map((m) => ({ format: m.format, name: m.suggestedName, head: m.data?.slice(0, 30) })),
    );
    assert.deepEqual(exports, [
      { format: 'csv', name: 'live-b-A-b.csv', head: 'step,loss,lr,loss_scale,overfl' },
      { format: 'png', name: 'live-b-A-b-loss.png', head: 'data:image/png;base64,iVBORw0K' },
    ]);
    await page.locator('#smoothing').focus();
    await page.keyboard.press('ArrowLeft');
    const saved = await page.evaluate(() => (window as unknown as { savedState: { smoothing: number } }).savedState);
    assert.equal(saved.smoothing, 0.59);
    assert.deepEqual(sockets, [], 'no WebSocket inside VS Code');
    await page.close();
  });

  test('keyboard only: zoom every chart to a step range, switch tabs; both survive a reload', async () => {
    const key = srv.runs().find((r) => r.runId === runA.run_id)!.key;
    const page = await openPage(`&run=${key}`);
    await waitCompleted(page);
    await page.locator('#zoom-from').focus();
    await page.keyboard.type('3');
    await page.keyboard.press('Tab');
    await page.keyboard.type('9');
    await page.keyboard.press('Tab'); // the Zoom button
    await page.keyboard.press('Enter');
    const ranges = () =>
      page.evaluate(() => {
        const d = (
          window as unknown as {
            __ascendDashboard: { charts(): string[]; xRange(id: string): { min: number; max: number } | null };
          }
        ).__ascendDashboard;
        return d
          .charts()
          .map((id) => d.xRange(id))
          .filter((r) => r !== null);
      });
    await page.waitForFunction(
      () => {
        const d = (
          window as unknown as { __ascendDashboard: { xRange(id: string): { min: number; max: number } | null } }
        ).__ascendDashboard;
        return d.xRange('loss')?.min === 3 && d.xRange('loss')?.max === 9;
      },
      null,
      { timeout: 10_000 },
    );
    const zoomed = await ranges();
    assert.ok(zoomed.length >= 5, 'the charts with data');
    assert.deepEqual(
      zoomed,
      zoomed.map(() => ({ min: 3, max: 9 })),
      'every chart shows steps 3 to 9',
    );

    // Tabs: focus the selected header, arrow right, Enter.
    await page.locator('[data-tab="training"]').focus();
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('Enter');
    await page
      .locator('.per-class-wrap table.per-class th.class-name')
      .first()
      .waitFor({ state: 'visible', timeout: 10_000 });

    await page.reload();
    await waitCompleted(page);
    await page.locator('.per-class-wrap table.per-class').waitFor({ state: 'visible', timeout: 10_000 });
    const state = await page.evaluate(() =>
      (window as unknown as { __ascendDashboard: { state(): unknown } }).__ascendDashboard.state(),
    );
    // (with the tracker's defaults: step x axis, no log scale, nothing hidden)
    assert.deepEqual(state, {
      smoothing: 0.6,
      zoom: { min: 3, max: 9 },
      tab: 1,
      xAxis: 'step',
      logCharts: [],
      hiddenSeries: {},
      hiddenRuns: [],
    });
    await page.close();
  });

  test('mouse: the cursor is synchronised across charts; a drag zooms all of them, a double click resets', async () => {
    const key = srv.runs().find((r) => r.runId === runA.run_id)!.key;
    const page = await openPage(`&run=${key}`);
    await waitCompleted(page);
    const whole = await page.evaluate(() =>
      (window as unknown as { __ascendDashboard: { xRange(id: string): unknown } }).__ascendDashboard.xRange('loss'),
    );
    const over = (await page.locator('[data-chart="loss"] .u-over').boundingBox())!;
    await page.mouse.move(over.x + over.width / 2, over.y + over.height / 2);
    // Every step chart's legend shows the hovered step (the per-epoch accuracy chart snaps to its nearest eval).
    const legends = () =>
      page.evaluate(() =>
        Object.fromEntries(
          [...document.querySelectorAll('[data-chart]')]
            .filter((el) => el.querySelector('.u-legend'))
            .map((el) => [
              (el as HTMLElement).dataset.chart,
              el.querySelector('.u-legend .u-series .u-value')?.textContent ?? '',
            ]),
        ),
      );
    await page.waitForFunction(
      () => document.querySelector('[data-chart="lr"] .u-legend .u-series .u-value')?.textContent !== '--',
    );
    const hovered = await legends();
    assert.equal(hovered.lr, hovered.loss);
    assert.equal(hovered.lossScale, hovered.loss);
    assert.equal(hovered.throughput, hovered.loss);
    assert.match(hovered.loss, /^\d+$/);

    await page.mouse.move(over.x + over.width * 0.2, over.y + 10);
    await page.mouse.down();
    await page.mouse.move(over.x + over.width * 0.7, over.y + 10, { steps: 5 });
    await page.mouse.up();
    const ranges = () =>
      page.evaluate(() => {
        const d = (
          window as unknown as {
            __ascendDashboard: { charts(): string[]; xRange(id: string): { min: number; max: number } | null };
          }
        ).__ascendDashboard;
        return d
          .charts()
          .map((id) => d.xRange(id))
          .filter((r) => r !== null);
      });
    const zoomed = await ranges();
    const steps = events(runA.run_dir).filter((e) => e.type === 'step').length;
    assert.ok(zoomed[0]!.min > 1 && zoomed[0]!.max < steps, JSON.stringify(zoomed[0]));
    assert.deepEqual(
      zoomed,
      zoomed.map(() => zoomed[0]),
      'one zoom for every chart',
    );
    await page.locator('[data-chart="lr"] .u-over').dblclick();
    await page.waitForFunction((w) => {
      const d = (
        window as unknown as { __ascendDashboard: { xRange(id: string): { min: number; max: number } | null } }
      ).__ascendDashboard;
      return JSON.stringify(d.xRange('loss')) === JSON.stringify(w);
    }, whole);
    await page.close();
  });

  test('a failed run shows its final status with the error summary', async () => {
    // One class folder: the runner refuses the data at set-up (bad_input) within seconds.
    const one = path.join(tmp, 'one');
    cpSync(path.join(tmp, 'data', 'blue triangle'), path.join(one, 'blue triangle'), { recursive: true });
    writeFileSync(path.join(tmp, 'c.json'), JSON.stringify(spec('broken', one, 1)));
    const runC = await launchRun(RUNNER, path.join(tmp, 'c.json'), runsRoot);
    await until('run C finished', () => events(runC.run_dir).some((e) => e.type === 'run_finished'), 120_000);
    const finished = events(runC.run_dir).find((e) => e.type === 'run_finished') as RunEventLite & {
      error: { kind: string; code?: string; params?: object; message: string; path?: string; fix?: string };
    };
    assert.equal(finished.status, 'failed');
    await until('run C listed', () => srv.runs().some((r) => r.runId === runC.run_id), 10_000);
    const key = srv.runs().find((r) => r.runId === runC.run_id)!.key;
    const page = await openPage(`&run=${key}`);
    await page.locator('section.final', { hasText: 'Run failed.' }).waitFor({ timeout: 30_000 });
    const text = await page.locator('section.final .error-summary').innerText();
    // the error as the host words it from its code and parameters (runnerErrors.ts)
    assert.equal(finished.error.code, 'too_few_classes');
    const worded = runnerErrorText(finished.error);
    assert.ok(worded, 'the error has a message');
    assert.match(worded.message, /^Found 1 class folder\(s\) in /);
    assert.equal(text, `${finished.error.kind}: ${worded.message}`);
    // bad input names the spec field and the fix, and the dashboard passes both on
    assert.ok(finished.error.path && worded.fix, 'the runner names the field and the fix');
    const fix = await page.locator('section.final .error-fix').innerText();
    assert.equal(fix, `Fix (${finished.error.path}): ${worded.fix}`);
    await page.screenshot({ path: path.join(OUT, 'failed.png'), fullPage: true });
    await page.close();
  });

  test('the verdict: an amber banner with every reason and fix for a run with problems, none for a healthy one', async () => {
    // Two finished runs written by hand in the runner's format (docs/protocol.md): the same events,
    // one verdict "problems" (the reasons of a real lr 100 run), one "healthy".
    const reasons = [
      {
        code: 'loss_rose',
        message: 'The loss rose from 9.1 to 2000 (medians of the first and last 3 steps).',
        fix: 'Lower train.lr (for example by 10x), or add train.warmup_steps.',
        early_loss: 9.1,
        late_loss: 2000,
        window: 3,
        steps: 10,
      },
      {
        code: 'chance_level',
        message: 'The best validation accuracy, 25.0%, is within 17.7% of chance (25.0% for 4 classes on 24 images).',
        fix: 'Train longer or with another train.lr.',
        best_val_acc: 0.25,
      },
    ];
    const write = (id: string, health: unknown) => {
      const dir = path.join(runsRoot, id);
      mkdirSync(dir);
      const t0 = 1796210000;
      const status = {
        run_id: id,
        state: 'completed',
        pid: null,
        host: 'x',
        started_at: t0,
        ended_at: t0 + 9,
        exit_code: 0,
        health,
      };
      writeFileSync(path.join(dir, 'status.json'), JSON.stringify(status));
      writeFileSync(path.join(dir, 'spec.json'), JSON.stringify(spec(id, '/nowhere', 1)));
      const ev = [
        {
          type: 'run_started',
          run_id: id,
          spec: spec(id, '/nowhere', 1),
          classes: ['a', 'b', 'c', 'd'],
          num_train: 96,
          num_val: 24,
          steps_per_epoch: 5,
          total_steps: 5,
          versions: {},
          device: 'CPU',
          amp: { level: 'O0', loss_scale: 'dynamic' },
        },
        ...[1, 2, 3, 4, 5].map((n) => ({
          type: 'step',
          epoch: 1,
          step: n,
          loss: 9 * n,
          lr: 100,
          loss_scale: 16777216,
          overflow: false,
          skipped: false,
          step_ms: 100,
          img_per_s: 100,
        })),
        {
          type: 'eval',
          epoch: 1,
          step: 5,
          val_loss: 2000,
          val_acc: 0.25,
          per_class_acc: [1, 0, 0, 0],
          confusion: null,
        },
        {
          type: 'run_finished',
          status: 'completed',
          error: null,
          best: null,
          final: { epoch: 1, step: 5, total_steps: 5, loss: 45 },
          health,
        },
      ];
      writeFileSync(
        path.join(dir, 'events.jsonl'),
        ev.map((e, i) => JSON.stringify({ v: 1, seq: i + 1, t: t0 + i, ...e })).join('\n') + '\n',
      );
      return id;
    };
    const bad = write('20261202-100000-verdict-bad-0bad', { verdict: 'problems', reasons });
    const good = write('20261202-100000-verdict-good-9009', { verdict: 'healthy', reasons: [] });
    await until(
      'both listed',
      () => srv.runs().filter((r) => r.runId === bad || r.runId === good).length === 2,
      10_000,
    );

    const page = await openPage(`&run=${srv.runs().find((r) => r.runId === bad)!.key}`);
    const banner = page.locator('section.verdict');
    await banner.waitFor({ state: 'visible', timeout: 30_000 });
    const text = await banner.innerText();
    assert.match(text, /^Run completed with problems/);
    // Each reason as the host words it from its code and parameters (loss_rose has them all), or the
    // runner's own English where a parameter is missing (chance_level here).
    for (const r of reasons) {
      const want = reasonText(r);
      assert.ok(text.includes(want.message), `${r.code}'s message in the banner: ${text}`);
      assert.ok(text.includes(`Fix: ${want.fix}`), `${r.code}'s fix in the banner: ${text}`);
    }
    assert.match(text, /median 9\.1 over the first 3 steps, 2,000 over the last 3/);
    assert.ok(text.includes(reasons[1].message), text);
    // amber, not green: the warning colour of the theme, and the final card is not the green one
    const colours = await page.evaluate(() => {
      const v = document.querySelector('section.verdict')!;
      const f = document.querySelector('section.final')!;
      return { verdict: getComputedStyle(v).borderLeftColor, final: f.className };
    });
    assert.match(colours.final, /final-problems/);
    assert.equal(await page.locator('header.run-header .state').innerText(), 'completed with problems');
    assert.doesNotMatch(colours.final, /final-completed/);
    // the O0 run's header and AMP card agree: no loss scale applies
    const amp = await page.locator('header.run-header').innerText();
    assert.match(amp, /O0 \(full precision\), no loss scaling needed/);
    assert.doesNotMatch(amp, /loss scale dynamic|2\^24/);
    assert.match(await page.locator('section.amp').innerText(), /Loss scaling does not apply: O0/);
    await page.screenshot({ path: path.join(OUT, 'verdict-problems.png'), fullPage: true });
    await page.close();

    const healthy = await openPage(`&run=${srv.runs().find((r) => r.runId === good)!.key}`);
    await healthy.locator('section.final', { hasText: 'Run completed.' }).waitFor({ timeout: 30_000 });
    assert.equal(await healthy.locator('section.verdict').isVisible(), false);
    const body = await healthy.locator('body').innerText();
    assert.doesNotMatch(body, /with problems/);
    assert.match((await healthy.locator('section.final').getAttribute('class')) ?? '', /final-completed/);
    await healthy.close();
  });

  test("inside VS Code's themes: the editor's variables win over the browser fallbacks, charts follow a theme change", async () => {
    const key = srv.runs().find((r) => r.runId === runA.run_id)!.key;
    const page = await openPage(`&run=${key}`, 'light');
    await waitCompleted(page);
    const look = () =>
      page.evaluate(() => {
        const card = getComputedStyle(document.querySelector('.card')!);
        const d = (window as unknown as { __ascendDashboard: { chartData(id: string): unknown } }).__ascendDashboard;
        // The loss series' colour, as uPlot's legend marker shows it.
        const marker = document.querySelector('[data-chart="loss"] .u-legend .u-series:nth-child(2) .u-marker');
        return {
          fg: getComputedStyle(document.body).color,
          bg: getComputedStyle(document.body).backgroundColor,
          border: card.borderTopColor,
          charted: d.chartData('loss') !== null,
          lossColor: marker ? getComputedStyle(marker).borderTopColor : null,
        };
      });
    const light = await look();
    assert.equal(light.fg, 'rgb(59, 59, 59)', 'the Light Modern fallback in a light browser');
    assert.equal(light.lossColor, 'rgb(26, 133, 255)', "Light Modern's charts.blue");
    // What a VS Code webview does: variables on <html>, a theme class on <body> (here: high contrast).
    await page.evaluate(() => {
      const vars: Record<string, string> = {
        '--vscode-foreground': '#ffffff',
        '--vscode-editor-background': '#000000',
        '--vscode-contrastBorder': '#6fc3df',
        '--vscode-focusBorder': '#f38518',
        '--vscode-charts-blue': '#00ff00',
      };
      for (const [k, v] of Object.entries(vars)) document.documentElement.style.setProperty(k, v);
      document.body.classList.add('vscode-high-contrast');
    });
    await page.waitForFunction(() => {
      const marker = document.querySelector('[data-chart="loss"] .u-legend .u-series:nth-child(2) .u-marker');
      return marker !== null && getComputedStyle(marker).borderTopColor === 'rgb(0, 255, 0)';
    });
    const hc = await look();
    assert.deepEqual(hc, {
      fg: 'rgb(255, 255, 255)',
      bg: 'rgb(0, 0, 0)',
      border: 'rgb(111, 195, 223)',
      charted: true,
      lossColor: 'rgb(0, 255, 0)',
    });
    await page.screenshot({ path: path.join(OUT, 'vscode-high-contrast.png'), fullPage: true });
    await page.close();
  });

  test('no request leaves 127.0.0.1, and the page had no errors', () => {
    assert.ok(requests.length > 0);
    const outside = requests.filter((u) => {
      if (u.startsWith('data:') || u.startsWith('blob:')) return false;
      return new URL(u).hostname !== '127.0.0.1';
    });
    assert.deepEqual(outside, []);
    assert.deepEqual(pageErrors, []);
  });

  test('without the token the page, the API and the socket are refused', async () => {
    const page = await browser.newPage();
    const res = await page.goto(srv.url.replace(/\?token=.*/, ''));
    assert.equal(res?.status(), 403);
    // From the dashboard's own origin but without the token: fetch 403, socket never opens.
    const result = await page.evaluate(async (port) => {
      const api = (await fetch(`http://127.0.0.1:${port}/api/runs`)).status;
      const socket = await new Promise<string>((resolve) => {
        const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`);
        ws.onopen = () => resolve('open');
        ws.onclose = () => resolve('closed');
      });
      return { api, socket };
    }, srv.port);
    assert.deepEqual(result, { api: 403, socket: 'closed' });
    await page.close();
  });

  test('a page from another origin cannot use the socket, even with the token', async () => {
    // Another local web page (another port is another origin) that knows the token.
    const other = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>other</title>');
    });
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', () => r()));
    const port = (other.address() as { port: number }).port;
    try {
      const page = await browser.newPage();
      await page.goto(`http://127.0.0.1:${port}/`);
      const state = await page.evaluate(
        ({ p, token }) =>
          new Promise<string>((resolve) => {
            const ws = new WebSocket(`ws://127.0.0.1:${p}/ws?token=${token}`);
            ws.onopen = () => resolve('open');
            ws.onclose = () => resolve('closed');
          }),
        { p: srv.port, token: srv.token },
      );
      assert.equal(state, 'closed');
      await page.close();
    } finally {
      other.close();
    }
    // And a client that forges the Origin header gets an HTTP 403.
    const status = await new Promise<number>((resolve, reject) => {
      const ws = new NodeWebSocket(`ws://127.0.0.1:${srv.port}/ws?token=${srv.token}`, {
        origin: 'http://evil.example',
      });
      ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.once('open', () => reject(new Error('opened')));
      ws.once('error', reject);
    });
    assert.equal(status, 403);
  });
});

/** Waits for the header to say `completed`; a timeout reports what the page shows instead. */
async function waitCompleted(page: Page): Promise<void> {
  try {
    await page.locator('[data-state="completed"]').waitFor({ timeout: 30_000 });
  } catch (err) {
    const shown = await page.evaluate(() => document.querySelector('.run-header')?.textContent ?? '(no header)');
    throw new Error(`the page never showed a completed run; its header: ${shown}`, { cause: err });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
