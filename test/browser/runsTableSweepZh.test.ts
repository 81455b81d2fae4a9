// The Runs Table and the Sweep panel in Simplified Chinese, in a real headless Chromium: each host's
// page (runsTableHtml, sweepHtml) carries the zh-cn bundle for vscode.env.language, as VS Code's
// zh-cn display language gives it, and webview/shared/l10n.ts reads it. The Runs Table talks to the
// host's own model (RunsTableModel) over listings shaped like the runner's `ls`; the Sweep panel
// draws a recorded real sweep-status (test/unit/fixtures/sweeps). Checked: headings, buttons, the
// column chooser and the filters, the empty states, durations and numbers in Chinese form, and no
// English left except what comes from the runs (names, spec field paths and values, metric keys).
// Screenshots go to test-output/browser/.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { ListedRunDetail } from '../../src/core/runs/presentation';
import { RunsTableModel } from '../../src/core/runs/tableModel';
import { toSweepStatus } from '../../src/core/sweeps/client';
import type { RunState } from '../../src/shared/eventsProtocol';
import { validateTableMessage } from '../../src/shared/runsTableProtocol';
import type { SweepPanelState } from '../../src/shared/sweepProtocol';
import { openWebview, postState, serveWebview, type WebviewHost } from './support';
import * as fake from '../unit/fixtures/fakeVscode';

const ROOT = path.join(__dirname, '..', '..');
const OUT = path.join(ROOT, 'test-output', 'browser');
const TARGET = 'ssh:npu-box';

before(() => {
  // What VS Code does for a zh-cn display language: env.language and the extension's zh-cn bundle.
  fake.env.language = 'zh-cn';
  fake.l10n.bundle = JSON.parse(readFileSync(path.join(ROOT, 'l10n', 'bundle.l10n.zh-cn.json'), 'utf8'));
  mkdirSync(OUT, { recursive: true });
});
after(() => {
  fake.env.language = 'en';
  fake.l10n.bundle = undefined;
});

/** Latin words left on the page once the allowed run text is taken out. */
function englishLeft(text: string, allowed: RegExp): string[] {
  return text.replace(allowed, '').match(/[A-Za-z]{2,}/g) ?? [];
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await sleep(25);
  }
  assert.fail(`timed out waiting for ${what}`);
}

describe('the Runs Table in zh-cn', () => {
  let web: WebviewHost;
  // The frozen run's health verdict as the runner writes it (test/unit/fixtures/sweeps/ls.json).
  const health = (
    JSON.parse(readFileSync(path.join(ROOT, 'test', 'unit', 'fixtures', 'sweeps', 'ls.json'), 'utf8')) as {
      runs: ListedRunDetail[];
    }
  ).runs[0].health;
  const run = (
    id: string,
    state: RunState,
    lr: number,
    freeze: string,
    summary: Record<string, number>,
    tags: string[] = [],
  ): ListedRunDetail => ({
    run_id: id,
    run_dir: `/runs/${id}`,
    name: id,
    state,
    started_at: 1_796_300_000,
    ended_at: state === 'running' ? undefined : 1_796_300_000 + (summary.duration_s ?? 60),
    meta: { tags },
    spec_fields: { name: id, 'train.lr': lr, 'model.freeze': freeze, 'train.epochs': 2, 'data.image_size': 32 },
    summary,
    ...(freeze === 'backbone' ? { health } : {}),
  });
  const runs = [
    run(
      'flowers-fast',
      'completed',
      0.05,
      'none',
      {
        best_val_acc: 0.8125,
        final_val_acc: 0.8,
        best_val_loss: 0.51,
        duration_s: 75,
        epochs_done: 2,
        img_per_s: 1234.5,
      },
      ['keeper'],
    ),
    run('flowers-slow', 'failed', 0.001, 'none', {
      best_val_acc: 0.4,
      best_val_loss: 1.2,
      duration_s: 3725,
      epochs_done: 1,
    }),
    run('flowers-frozen', 'completed', 0.05, 'backbone', { best_val_acc: 0.25, duration_s: 40, epochs_done: 2 }),
  ];
  let title = '';

  before(async () => {
    title = fake.l10n.t('Runs Table: {0}', TARGET); // as the panel titles it, in the display language
    const { runsTableHtml } =
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- after the fake vscode (./support) is in place
      require('../../src/vscode/runsTable/panel') as typeof import('../../src/vscode/runsTable/panel');
    web = await serveWebview({ name: 'runsTable', html: (w, u) => runsTableHtml(w, u, title) });
  });
  after(() => web?.close());

  /** The page wired to a host model as the panel wires it: each UI message in, a snapshot back. */
  async function open(model: RunsTableModel): Promise<Page> {
    const page = await web.browser.newPage({ viewport: { width: 1500, height: 1000 } });
    const post = () =>
      page.evaluate(
        (st) => (globalThis as unknown as { postMessage(m: unknown, o: string): void }).postMessage(st, '*'),
        { type: 'state', state: model.snapshot() },
      );
    await page.exposeFunction('__host', async (raw: unknown) => {
      const v = validateTableMessage(raw);
      assert.ok(v.ok, `the UI sent a message the host refuses: ${JSON.stringify(raw)}`);
      model.handle(v.message);
      await post();
    });
    await page.addInitScript(`
      window.acquireVsCodeApi = () => ({ postMessage: (m) => window.__host(m), getState: () => null, setState: () => {} });
    `);
    await page.goto(web.base);
    return page;
  }

  test('headings, columns, menus, buttons and the config diff are Chinese', { timeout: 60_000 }, async () => {
    const model = new RunsTableModel(title, false);
    model.setListings([{ targetId: 'npu', targetLabel: TARGET, runs }], [], 1_796_400_000);
    const page = await open(model);
    await page.locator('#runs tbody tr[data-id]').first().waitFor();
    assert.equal(await page.evaluate(() => document.documentElement.lang), 'zh-cn');
    assert.equal(await page.locator('#title').textContent(), '运行表：ssh:npu-box');
    assert.equal(await page.locator('#count').textContent(), '显示 3 个，共 3 个运行');

    // Fixed columns by their Chinese names; spec field paths as they are.
    const header = (key: string) => page.locator(`#runs thead th[data-key="${key}"]`).textContent();
    assert.equal(await header('state'), '状态');
    assert.equal(await header('best_val_acc'), '最佳验证准确率');
    assert.equal(await header('duration_s'), '时长');
    assert.equal(await header('spec:train.lr'), 'train.lr');
    // States, durations and numbers in Chinese form.
    const row = (id: string) => page.locator(`#runs tbody tr[data-run="${id}"]`);
    assert.equal(await row('flowers-fast').locator('td.state').textContent(), '✓ 已完成');
    assert.equal(await row('flowers-slow').locator('td.state').textContent(), '✗ 失败');
    assert.equal(await row('flowers-fast').locator('td[data-key="duration_s"]').textContent(), '1 分 15 秒');
    assert.equal(await row('flowers-slow').locator('td[data-key="duration_s"]').textContent(), '1 小时 02 分');
    assert.equal(await row('flowers-fast').locator('td[data-key="img_per_s"]').textContent(), '1,235');
    assert.equal(await row('flowers-fast').locator('td[data-key="best_val_acc"]').textContent(), '81.3%');
    assert.match((await row('flowers-frozen').locator('td.state').textContent()) ?? '', /⚠/, 'its health warning');

    // The toolbar and the filters.
    assert.equal(await page.locator('#refresh').textContent(), '刷新');
    assert.equal(await page.locator('#filter-text').getAttribute('placeholder'), '筛选：关键词，或 字段=值（lr=0.01）');
    await page.locator('#states summary').click();
    assert.deepEqual(await page.locator('#states label').allTextContents(), [' 已完成', ' 失败']);
    await page.locator('#tags summary').click();
    await page.locator('#columns summary').click();
    assert.equal(await page.locator('#columns summary').textContent(), '列');
    assert.equal(await page.locator('#columns-auto').textContent(), '默认');
    assert.equal(await page.locator('#columns-all').textContent(), '所有规格字段');
    assert.equal(await page.locator('#columns label[data-key="img_per_s"]').textContent(), ' 图像/秒');
    await page.locator('#add-range').click();
    await page.locator('#ranges .range').waitFor();
    assert.equal(await page.locator('#ranges .range-min').getAttribute('placeholder'), '最小');
    assert.equal(await page.locator('#ranges .range select option:checked').textContent(), '最佳验证准确率');
    assert.match((await page.locator('#ranges .range').textContent()) ?? '', / 从 .* 至 /);

    // Two selected: the actions and the config diff.
    assert.equal(await page.locator('#selected-count').textContent(), '选择运行以比较或删除');
    for (const id of ['flowers-fast', 'flowers-slow']) await row(id).locator('td.sel input').check();
    await until('two selected', async () => (await page.locator('#selected-count').textContent()) === '已选 2 个');
    assert.equal(await page.locator('#compare').textContent(), '比较运行');
    assert.equal(await page.locator('#delete').textContent(), '删除');
    await page.locator('#diff-open').click();
    await page.locator('#diff-table').waitFor();
    assert.match((await page.locator('#diff h3').textContent()) ?? '', /^2 个运行的配置差异 · \d+ 个字段不同$/);
    assert.equal(await page.locator('#diff-table thead th').first().textContent(), '字段');
    assert.equal(await page.locator('#diff label.check').textContent(), ' 仅显示差异');
    assert.equal(await page.locator('#diff-close').textContent(), '关闭');

    const text = await page.locator('body').innerText();
    await page.screenshot({ path: path.join(OUT, 'runs-table-zh-cn.png'), fullPage: true });
    // From the runs: names and tags, spec field paths (`name` too) and values, the target; and the
    // term ID (运行 ID, as Chinese UIs write it).
    const fromRuns =
      /flowers-\w+|keeper|ssh:npu-box|\b[a-z_]+(\.[a-z_0-9]+)+\b|\bname\b|\bnone\b|\bbackbone\b|lr=|\bID\b/g;
    assert.deepEqual(englishLeft(text, fromRuns), [], `English left on the page:\n${text}`);
    await page.close();
  });

  test('the empty states are Chinese: no runs yet, and none matching the filter', { timeout: 60_000 }, async () => {
    const empty = new RunsTableModel(title, false);
    empty.setListings([{ targetId: 'npu', targetLabel: TARGET, runs: [] }], [], 1_796_400_000);
    let page = await open(empty);
    await until('the empty table', async () => (await page.locator('#runs td.empty').count()) === 1);
    assert.equal(await page.locator('#runs td.empty').textContent(), '此目标上还没有运行。');
    assert.equal(await page.locator('#count').textContent(), '显示 0 个，共 0 个运行');
    await page.locator('#tags summary').click();
    assert.equal(await page.locator('#tags .menu .muted').textContent(), '没有标签');
    const text = await page.locator('body').innerText();
    assert.deepEqual(englishLeft(text, /ssh:npu-box/g), [], `English left on the page:\n${text}`);
    await page.close();

    const model = new RunsTableModel(title, false);
    model.setListings([{ targetId: 'npu', targetLabel: TARGET, runs }], [], 1_796_400_000);
    page = await open(model);
    await page.locator('#runs tbody tr[data-id]').first().waitFor();
    await page.locator('#filter-text').fill('no-such-run');
    await until('the filter', async () => (await page.locator('#runs td.empty').count()) === 1);
    assert.equal(await page.locator('#runs td.empty').textContent(), '没有符合筛选条件的运行。');
    assert.equal(await page.locator('#count').textContent(), '显示 0 个，共 3 个运行');
    await page.close();
  });
});

describe('the Sweep panel in zh-cn', () => {
  let web: WebviewHost;
  const status = toSweepStatus(
    JSON.parse(readFileSync(path.join(ROOT, 'test', 'unit', 'fixtures', 'sweeps', 'sweep-status.json'), 'utf8')),
  );
  // From the sweep: its name, trials' run ids, parameter names and values, the metric key, the
  // sampler's and pruner's names, the target.
  const fromSweep = new RegExp(
    [
      status.name,
      '\\d{8}-\\d{6}-[\\w-]+',
      '\\b[a-z_]+(\\.[a-z_0-9]+)+\\b',
      'up_to:layer2',
      '\\bnone\\b',
      'best_val_acc',
      status.sampler!,
      status.pruner!,
      TARGET,
    ].join('|'),
    'g',
  );

  before(async () => {
    const { sweepHtml } =
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- after the fake vscode (./support) is in place
      require('../../src/vscode/sweeps/panel') as typeof import('../../src/vscode/sweeps/panel');
    web = await serveWebview({ name: 'sweep', html: (w, u) => sweepHtml(w, u) });
  });
  after(() => web?.close());

  test('a finished sweep: header, trials, importances and buttons are Chinese', { timeout: 60_000 }, async () => {
    const page = await openWebview(web, { width: 1200, height: 1000 });
    assert.equal(await page.evaluate(() => document.documentElement.lang), 'zh-cn');
    const state: SweepPanelState = { target: TARGET, status, error: null };
    await postState(page, state);
    await page.locator('#trials tbody tr').first().waitFor();
    assert.equal(await page.locator('h1').textContent(), `超参数搜索 ${status.name}`);
    assert.equal(await page.locator('#state').textContent(), '已完成');
    assert.deepEqual(await page.locator('h2').allTextContents(), ['试验', '参数重要性', '参数 → 优化目标']);
    const header = await page.locator('.header').innerText();
    assert.match(header, /4\/4 个试验/);
    assert.match(header, /已完成 3 · 已剪枝 1 · 失败 0 · 运行中 0/);
    assert.match(header, /优化目标 best_val_acc（最大化）/);
    assert.match(header, /random 采样器 · median 剪枝器 · ssh:npu-box/);
    assert.equal(await page.locator('#fine-tune-best').textContent(), '从最佳试验微调');
    assert.equal(await page.locator('#fine-tune-best').getAttribute('title'), '从试验 2 的最佳检查点开始微调');
    assert.equal(await page.locator('#open-table').textContent(), '运行表');
    const heads = await page.locator('#trials thead th').allTextContents();
    assert.deepEqual([heads[1], ...heads.slice(-2)], ['状态', '剪枝时的轮次', '运行']);
    const pruned = status.trials.find((t) => t.state === 'PRUNED')!;
    assert.equal(
      await page.locator(`#trials tbody tr[data-number="${pruned.number}"] td`).nth(1).textContent(),
      '已剪枝',
    );
    assert.equal(await page.locator('#importances span.muted').first().textContent(), '99.9%');
    assert.match((await page.locator('#parallel polyline title').first().textContent()) ?? '', /^试验 \d+：/);

    const text = await page.locator('body').innerText();
    await page.screenshot({ path: path.join(OUT, 'sweep-panel-zh-cn.png'), fullPage: true });
    assert.deepEqual(englishLeft(text, fromSweep), [], `English left on the page:\n${text}`);
    await page.close();
  });

  test('a sweep without results yet, and one not read yet, say so in Chinese', { timeout: 60_000 }, async () => {
    const page = await openWebview(web);
    await postState(page, { target: TARGET, status: null, error: null });
    await until('the reading note', async () => (await page.locator('#app').textContent()) === '正在读取超参数搜索…');
    const early = {
      ...status,
      state: 'running' as const,
      best: null,
      importances: null,
      trials: status.trials.slice(0, 2).map((t) => ({ ...t, state: 'RUNNING' as const, value: null, outcome: null })),
    };
    await postState(page, { target: TARGET, status: early, error: null });
    await page.locator('#stop').waitFor();
    assert.equal(await page.locator('#stop').textContent(), '停止超参数搜索');
    assert.equal(await page.locator('#state').textContent(), '运行中');
    assert.equal(await page.locator('#fine-tune-best').getAttribute('title'), '还没有完成的试验');
    assert.equal(await page.locator('#importances').textContent(), '有两个试验完成后将显示参数重要性。');
    assert.equal(await page.locator('#parallel').textContent(), '有试验得出数值后将显示图表。');
    assert.deepEqual(
      await page.locator('#trials tbody td:nth-child(2)').allTextContents(),
      ['运行中', '运行中'],
      "the trials' states",
    );
    const text = await page.locator('body').innerText();
    assert.deepEqual(englishLeft(text, fromSweep), [], `English left on the page:\n${text}`);
    await page.close();
  });
});
