// The dashboard in Simplified Chinese, in a real Chromium behind the real browser server, on two
// REAL short CPU runs of the runner (resnet18 at 32 px on the demo shapes, O0, host telemetry;
// they differ in the learning rate and unfreeze the backbone at epoch 2): the server reads the
// zh-cn bundle for `--lang zh-cn` (and for a browser whose Accept-Language asks for Chinese), the
// page says its tabs, headings, chart titles, series, cards and chart markers in Chinese, the
// host's sentences (the loss-scale card, banners) come in Chinese too, and no English is left in
// the visible chrome except what comes from the run (names, spec keys, values) and units.
// Screenshots go to test-output/browser/.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { startDashboardServer, type DashboardServer } from '../../src/core/dashboard/server';
import { runRunner } from '../../src/core/targets/runnerCli';
import { buildWebview, launchChromium, makeDemoData, RUNNER } from './support';

const ROOT = path.resolve(__dirname, '..', '..');
const OUT = path.join(ROOT, 'test-output', 'browser');

/**
 * Words allowed to stay Latin: names from the run and the spec (code, per docs/glossary.md), units,
 * and the product's acronyms. Anything else Latin in the chrome is an untranslated string.
 */
const KEPT =
  /^(zh|resnet\d*|mindcv|imagenet|O[0-3]|fp(16|32)|CPU|NPU|HBM|RSS|GB|MB|W|ms|EMA|Top|CSV|PNG|log2?|spec|json|run_started|lr|backbone|amp|loss_scale|level|train|none|dynamic|warmup_steps|telemetry_s|device|npu|smi|X)$/;

function englishWords(text: string, runNames: readonly string[]): string[] {
  let rest = text;
  for (const n of runNames) rest = rest.split(n).join(' ');
  return (rest.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? []).filter((w) => w.length > 1 && !KEPT.test(w));
}

/**
 * The visible text of the page's chrome: what the run wrote (names, notes, spec paths and values,
 * class names, the host) and the runner's own English sentences (notices, the verdict's reasons:
 * runner message codes are another issue's) are hidden while it is read.
 */
async function chromeText(page: Page): Promise<string> {
  return page.evaluate(() => {
    const runWritten = document.querySelectorAll<HTMLElement>(
      '.run-name, .run-notes, .tag-chip, .notice-message, .notice code, .verdict-reasons, .config-table tbody, .config-table thead th[data-run], .class-name, .compare-runs strong, .differs, .field-value, .u-legend, .chart-body, #run-picker',
    );
    const was = [...runWritten].map((e) => e.style.display);
    runWritten.forEach((e) => (e.style.display = 'none'));
    const text = document.body.innerText;
    runWritten.forEach((e, i) => (e.style.display = was[i]));
    return text;
  });
}

describe('the dashboard in zh-cn, on real CPU runs', { timeout: 900_000 }, () => {
  const tmp = mkdtempSync(path.join(tmpdir(), 'dash-zh-'));
  const runsRoot = path.join(tmp, 'runs');
  const emptyRoot = path.join(tmp, 'empty');
  let srv: DashboardServer;
  let browser: Browser;
  const pageErrors: string[] = [];
  const runDirs = { a: path.join(runsRoot, 'run-a'), b: path.join(runsRoot, 'run-b') };
  const assets = path.join(tmp, 'assets');

  before(async () => {
    mkdirSync(OUT, { recursive: true });
    await buildWebview('dashboard', path.join(assets, 'dashboard.js'));
    const train = await makeDemoData(path.join(tmp, 'data'), 12);
    mkdirSync(runsRoot);
    mkdirSync(emptyRoot);
    for (const [k, lr] of [
      ['a', 0.02],
      ['b', 0.002],
    ] as const) {
      const spec = {
        name: `zh-${k}`,
        data: { train: train, image_size: 32, batch_size: 8, workers: 1, val_split: 0.25 },
        // layer4 and the head train in epoch 1, all of it from epoch 2: an unfreeze marker on the charts
        model: { backbone: 'resnet18', freeze: 'up_to:layer3', unfreeze: [{ epoch: 2, freeze: 'none' }] },
        train: { epochs: 2, lr },
        amp: { level: 'O0', loss_scale: 'none' },
        checkpoint: { every_steps: 1000 },
        device: { target: 'CPU', telemetry_s: 0.3 },
      };
      writeFileSync(path.join(tmp, `${k}.json`), JSON.stringify(spec));
      await runRunner(RUNNER, ['train', path.join(tmp, `${k}.json`), '--run-dir', runDirs[k]], { timeoutMs: 400_000 });
    }
    // `--lang zh-cn`, with the repo's l10n/ (the bundle VS Code reads too)
    srv = await startDashboardServer({
      path: runsRoot,
      assetsDir: assets,
      lang: 'zh-cn',
      l10nDir: path.join(ROOT, 'l10n'),
    });
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await srv?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  const keyOf = (k: 'a' | 'b') => srv.runs().find((r) => r.runId === path.basename(runDirs[k]))!.key;

  async function open(query: string): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1200, height: 1800 } });
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.goto(`${srv.url}${query}`);
    await page.waitForFunction(
      () =>
        ((
          window as unknown as { __ascendDashboard?: { chartData(id: string): unknown[][] | null } }
        ).__ascendDashboard?.chartData('loss')?.[0].length ?? 0) > 0,
      null,
      { timeout: 60_000, polling: 50 },
    );
    return page;
  }

  test('one run: tabs, headings, charts, the loss-scale card and the config in Chinese, no English chrome left', async () => {
    const page = await open(`&run=${keyOf('a')}`);
    assert.equal(await page.evaluate(() => document.documentElement.lang), 'zh-cn');
    const tabs = (await page.locator('vscode-tab-header').allTextContents()).map((t) => t.trim());
    assert.deepEqual([tabs[0], tabs[1], tabs[3]], ['训练', '各类别准确率', '配置']);
    assert.match(tabs[2], /^警告与错误/);
    const headings = await page.locator('.chart-head h3').allTextContents();
    assert.ok(headings.includes('训练损失'), headings.join(' | '));
    assert.ok(headings.includes('学习率'), headings.join(' | '));
    // model.unfreeze's chart marker, labelled in Chinese (the stage names stay as written)
    const mark = page.locator('[data-chart="loss"] .event-mark[data-kind="unfreeze"]');
    await mark.waitFor({ state: 'attached' });
    assert.equal(await mark.locator('span').textContent(), '解冻 stem+layer1+layer2+layer3');
    assert.match((await mark.getAttribute('title')) ?? '', /^第 \d+ 步：解冻 stem\+layer1\+layer2\+layer3$/);
    assert.equal(await page.locator('.amp h3').textContent(), '混合精度健康状况');
    // the host's sentence for an O0 run (core/dashboard/ampScaling.ts through the tab's translator)
    assert.match(
      (await page.locator('[data-field="amp-not-applicable"]').textContent()) ?? '',
      /^损失缩放不适用：O0 以全精度/,
    );
    // series toggles (chart labels) and the header's fields
    const series = await page.locator('[data-chart-card="accuracy"] .series-toggles label').allTextContents();
    assert.ok(series.map((s) => s.trim()).includes('验证准确率 %'), series.join(' | '));
    assert.match(await page.locator('.run-header').innerText(), /骨干网络[\s\S]*最佳验证准确率/);
    assert.match(await page.locator('.final').innerText(), /运行已完成。/);
    // the runner's verdict on the small validation set: its reasons are the runner's English, the frame is ours
    assert.match(await page.locator('.verdict').innerText(), /^运行已完成，但有问题：/);
    assert.match(await page.locator('.verdict .fix').first().innerText(), /^修复：/);
    // numbers and durations in the display language's words
    assert.match(
      (await page.locator('[data-field="elapsed"] .field-value').textContent()) ?? '',
      /^\d+ (秒|分 \d\d 秒)$/,
    );
    const texts: string[] = [await chromeText(page)];
    await page.screenshot({ path: path.join(OUT, 'dashboard-zh-cn.png'), fullPage: true });
    for (const tab of ['classes', 'notices', 'config']) {
      await page.locator(`vscode-tab-header[data-tab="${tab}"]`).click();
      texts.push(await chromeText(page));
    }
    assert.match(texts[3], /解析后的运行规格（spec\.json）/);
    assert.match(texts[3], /版本与设备/);
    const english = englishWords(texts.join('\n'), ['zh-a', 'zh-b', 'run-a', 'run-b']);
    assert.deepEqual(english, [], `English left on the page:\n${texts.join('\n----\n')}`);
    await page.close();
    assert.deepEqual(pageErrors, []);
  });

  test('Compare Runs: the config diff and the run lines in Chinese', async () => {
    const page = await open(`&compare=${keyOf('a')},${keyOf('b')}`);
    assert.match(await page.locator('.run-header h1').innerText(), /^正在比较 2 个运行$/);
    assert.match(await page.locator('.compare-runs').innerText(), /已完成，第 \d+(\/\d+)? 步，最佳/);
    await page.locator('vscode-tab-header[data-tab="config"]').click();
    const diff = page.locator('[data-config="diff"]');
    assert.equal(await diff.locator('caption').textContent(), '这些运行之间有 1 个规格字段不同');
    assert.deepEqual(
      await diff.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-path'))),
      ['train.lr'],
    );
    assert.match(
      (await page.locator('label[for="config-diff-all"]').textContent()) ?? '',
      /显示所有字段（\d+ 个在各运行中相同）/,
    );
    const english = englishWords(await chromeText(page), ['zh-a', 'zh-b', 'run-a', 'run-b']);
    await page.screenshot({ path: path.join(OUT, 'dashboard-compare-zh-cn.png'), fullPage: true });
    assert.deepEqual(english, [], 'English left in Compare Runs');
    await page.close();
    assert.deepEqual(pageErrors, []);
  });

  test("a browser asking for Chinese (Accept-Language) gets it without --lang: an empty folder's banner", async () => {
    const empty = await startDashboardServer({ path: emptyRoot, assetsDir: assets, l10nDir: path.join(ROOT, 'l10n') });
    try {
      const zh = await browser.newContext({ locale: 'zh-CN' });
      const page = await zh.newPage();
      await page.goto(empty.url);
      await page.locator('.banner[role="alert"]:not([hidden])').waitFor();
      assert.equal(await page.locator('.banner[role="alert"]').textContent(), '此文件夹中还没有运行。');
      // connecting, or (once the empty snapshot is in) nothing to show: Chinese either way
      assert.match(await page.locator('.run-header').innerText(), /^(正在连接运行…|还没有可显示的运行。)$/);
      await zh.close();
      // an English browser gets English
      const en = await browser.newContext({ locale: 'en-US' });
      const enPage = await en.newPage();
      await enPage.goto(empty.url);
      await enPage.locator('.banner[role="alert"]:not([hidden])').waitFor();
      assert.equal(await enPage.locator('.banner[role="alert"]').textContent(), 'No runs in this folder yet.');
      await en.close();
    } finally {
      await empty.close();
    }
  });
});
