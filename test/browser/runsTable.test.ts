// The Runs Table (webview/runsTable) in a real headless Chromium (playwright-core + Debian's
// /usr/bin/chromium), behind the host's own page and Content-Security-Policy (runsTableHtml), over
// REAL runs: three tiny CPU fine-tunes of the runner with different learning rates and freeze
// settings, listed by the runner's real `ls` (summary.json and the flattened spec). The page talks
// to the same host-side model the panel uses (RunsTableModel, through validateTableMessage), so a
// click goes UI -> host -> snapshot -> UI as in VS Code. Checked: the rows and their results, only
// the differing spec fields as columns, sort, the text/tag/range filters, and the config diff of two
// selected runs with its differences highlighted. A screenshot goes to test-output/browser/.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { ListedRunDetail } from '../../src/core/runs/presentation';
import { RunsTableModel, type TableAction } from '../../src/core/runs/tableModel';
import { launchRun, runnerArgs, runRunner } from '../../src/core/targets/runnerCli';
import { validateTableMessage } from '../../src/shared/runsTableProtocol';
import { makeDemoData, RUNNER, serveWebview, type WebviewHost } from './support';

const ROOT = path.resolve(__dirname, '..', '..');
const OUT = path.join(ROOT, 'test-output', 'browser');
const tmp = mkdtempSync(path.join(tmpdir(), 'aft-runs-table-'));
const runsRoot = path.join(tmp, 'runs');
let web: WebviewHost;
let listed: ListedRunDetail[] = [];
const model = new RunsTableModel('Runs Table: this machine', false);
const actions: TableAction[] = [];

function spec(name: string, train: string, lr: number, freeze: string): object {
  return {
    name,
    data: { train, image_size: 32, batch_size: 16, workers: 2 },
    model: { backbone: 'resnet18', freeze },
    train: { epochs: 2, lr },
    amp: { level: 'O2', loss_scale: 'dynamic' },
    checkpoint: { every_steps: 1000 },
    device: { target: 'CPU' },
  };
}

before(async () => {
  mkdirSync(OUT, { recursive: true });
  const { runsTableHtml } =
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- after the fake vscode (./support) is in place
    require('../../src/vscode/runsTable/panel') as typeof import('../../src/vscode/runsTable/panel');
  web = await serveWebview({
    name: 'runsTable',
    dir: tmp,
    html: (w, u) => runsTableHtml(w, u, 'Runs Table: this machine'),
  });

  // Three real runs that differ in train.lr and model.freeze, trained side by side.
  const train = await makeDemoData(path.join(tmp, 'data'), 24);
  mkdirSync(runsRoot);
  const runs = [
    ['fast', 0.05, 'none'],
    ['slow', 0.001, 'none'],
    ['frozen', 0.05, 'backbone'],
  ] as const;
  const launched = [];
  for (const [name, lr, freeze] of runs) {
    writeFileSync(path.join(tmp, `${name}.json`), JSON.stringify(spec(name, train, lr, freeze)));
    launched.push(await launchRun(RUNNER, path.join(tmp, `${name}.json`), runsRoot));
  }
  const deadline = Date.now() + 400_000;
  for (;;) {
    const out = await runRunner<{ runs: ListedRunDetail[] }>(RUNNER, runnerArgs.ls(runsRoot));
    if (out.runs.length === 3 && out.runs.every((r) => r.state !== 'running')) break;
    assert.ok(Date.now() < deadline, 'the three runs did not end in time');
    await sleep(500);
  }
  await runRunner(RUNNER, runnerArgs.meta(launched[1].run_dir, { tag: ['keeper'] }));
  listed = (await runRunner<{ runs: ListedRunDetail[] }>(RUNNER, runnerArgs.ls(runsRoot))).runs;
  model.setListings([{ targetId: 'local', targetLabel: 'this machine', runs: listed }], [], Date.now() / 1000);
});

after(async () => {
  await web?.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** The page, wired to the host's model as the panel wires it: each UI message in, a snapshot back. */
async function open(): Promise<Page & { refused: string[]; errors: string[] }> {
  const page = (await web.browser.newPage({ viewport: { width: 1500, height: 900 } })) as Page & {
    refused: string[];
    errors: string[];
  };
  page.refused = [];
  page.errors = [];
  page.on('console', (m) => /Content.Security.Policy|Refused/i.test(m.text()) && page.refused.push(m.text()));
  page.on('pageerror', (e) => page.errors.push(String(e)));
  const post = () =>
    page.evaluate(
      (st) => (globalThis as unknown as { postMessage(m: unknown, o: string): void }).postMessage(st, '*'),
      { type: 'state', state: model.snapshot() },
    );
  await page.exposeFunction('__host', async (raw: unknown) => {
    const v = validateTableMessage(raw);
    assert.ok(v.ok, `the UI sent a message the host refuses: ${JSON.stringify(raw)}`);
    const action = model.handle(v.message);
    if (action.type !== 'none') actions.push(action);
    await post();
  });
  await page.addInitScript(`
    window.acquireVsCodeApi = () => ({ postMessage: (m) => window.__host(m), getState: () => null, setState: () => {} });
  `);
  await page.goto(web.base);
  await page.locator('#runs tbody tr[data-id]').first().waitFor();
  return page;
}

const byName = (name: string) => listed.find((r) => r.name === name)!;
const columnKeys = (page: Page) =>
  page.locator('#runs thead th[data-key]').evaluateAll((ths) => ths.map((t) => (t as HTMLElement).dataset.key));
const cells = (page: Page, key: string) => page.locator(`#runs tbody td[data-key="${key}"]`).allTextContents();
const rowRuns = (page: Page) =>
  page.locator('#runs tbody tr[data-id]').evaluateAll((trs) => trs.map((t) => (t as HTMLElement).dataset.run));
async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await sleep(25);
  }
  assert.fail(`timed out waiting for ${what}`);
}

test(
  'the table shows the real runs, only the differing spec fields, and their results',
  { timeout: 60_000 },
  async () => {
    const page = await open();
    assert.deepEqual(page.refused, [], 'the bundle and its stylesheet load under the CSP');
    assert.equal(await page.locator('#runs tbody tr[data-id]').count(), 3);
    const keys = await columnKeys(page);
    assert.ok(keys.includes('spec:train.lr') && keys.includes('spec:model.freeze'), `differing columns: ${keys}`);
    assert.ok(!keys.includes('spec:data.image_size') && !keys.includes('spec:train.epochs'), 'equal fields stay out');
    assert.ok(keys.includes('best_val_acc') && keys.includes('skipped_updates') && keys.includes('img_per_s'));

    // Each run's figures are the ones its summary.json gave `ls`.
    for (const r of listed) {
      const row = page.locator(`#runs tbody tr[data-run="${r.run_id}"]`);
      const acc = (r.summary as { best_val_acc: number }).best_val_acc;
      assert.equal(await row.locator('td[data-key="best_val_acc"]').textContent(), `${(acc * 100).toFixed(1)}%`);
      assert.equal(
        await row.locator('td[data-key="skipped_updates"]').textContent(),
        String((r.summary as { skipped_updates: number }).skipped_updates),
      );
      assert.match((await row.locator('td.state').textContent()) ?? '', /completed/);
    }
    // The rest one click away: the column chooser lists the equal fields too, and shows one on demand.
    await page.locator('#columns summary').click();
    await page.locator('#columns label[data-key="spec:data.image_size"] input').check();
    await until('the image size column', async () => (await columnKeys(page)).includes('spec:data.image_size'));
    assert.deepEqual(await cells(page, 'spec:data.image_size'), ['32', '32', '32']);
    await page.locator('#columns-auto').click();
    await until('the default columns', async () => !(await columnKeys(page)).includes('spec:data.image_size'));
    assert.deepEqual(page.errors, []);
    await page.close();
  },
);

test('sort by a column, then filter by text, tag and a numeric range', { timeout: 60_000 }, async () => {
  const page = await open();
  await page.locator('#runs thead th[data-key="spec:train.lr"]').click();
  await until('lr ascending', async () => (await cells(page, 'spec:train.lr'))[0] === '0.001');
  assert.deepEqual(await cells(page, 'spec:train.lr'), ['0.001', '0.05', '0.05']);
  await page.locator('#runs thead th[data-key="spec:train.lr"]').click();
  await until('lr descending', async () => (await cells(page, 'spec:train.lr'))[2] === '0.001');
  assert.equal(await page.locator('#runs thead th[data-key="spec:train.lr"]').getAttribute('aria-sort'), 'descending');

  await page.locator('#runs thead th[data-key="best_val_acc"]').click();
  const accs = listed.map((r) => (r.summary as { best_val_acc: number }).best_val_acc).sort((a, b) => b - a);
  await until(
    'best accuracy first',
    async () => (await cells(page, 'best_val_acc'))[0] === `${(accs[0] * 100).toFixed(1)}%`,
  );

  await page.locator('#filter-text').fill('freeze=backbone');
  await until('the text filter', async () => (await rowRuns(page)).length === 1);
  assert.deepEqual(await rowRuns(page), [byName('frozen').run_id]);
  assert.match((await page.locator('#count').textContent()) ?? '', /1 of 3 runs/);
  await page.locator('#filter-text').fill('');
  await until('no text filter', async () => (await rowRuns(page)).length === 3);

  await page.locator('#tags summary').click();
  await page.locator('#tags label[data-value="keeper"] input').check();
  await until('the tag filter', async () => (await rowRuns(page)).length === 1);
  assert.deepEqual(await rowRuns(page), [byName('slow').run_id]);
  await page.locator('#tags label[data-value="keeper"] input').uncheck();
  await until('no tag filter', async () => (await rowRuns(page)).length === 3);

  await page.locator('#add-range').click();
  await page.locator('#ranges .range select').selectOption('spec:train.lr');
  await until(
    'the range on lr',
    async () => (await page.locator('#ranges .range').getAttribute('data-key')) === 'spec:train.lr',
  );
  await page.locator('#ranges .range-min').fill('0.01');
  await page.locator('#ranges .range-min').dispatchEvent('change');
  await until('the range filter', async () => (await rowRuns(page)).length === 2);
  assert.deepEqual((await rowRuns(page)).sort(), [byName('fast').run_id, byName('frozen').run_id].sort());
  // Among the two listed runs only model.freeze differs now: the lr column goes.
  const keys = await columnKeys(page);
  assert.ok(keys.includes('spec:model.freeze') && !keys.includes('spec:train.lr'), `columns: ${keys}`);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test(
  'two selected runs: a config diff with the differences highlighted, and Compare Runs',
  { timeout: 60_000 },
  async () => {
    model.handle({ type: 'filter', filter: { text: '', tags: [], states: [], ranges: [] } });
    model.handle({ type: 'select', ids: [] });
    const page = await open();
    assert.equal(await page.locator('#compare').getAttribute('disabled'), '', 'Compare needs two runs');
    for (const name of ['slow', 'frozen'])
      await page.locator(`#runs tbody tr[data-run="${byName(name).run_id}"] td.sel input`).check();
    await until('two selected', async () => (await page.locator('#selected-count').textContent()) === '2 selected');
    await page.locator('#diff-open').click();
    await page.locator('#diff-table').waitFor();
    const head = await page.locator('#diff-table thead th').allTextContents();
    assert.deepEqual(head.slice(1).sort(), [byName('slow').display_name, byName('frozen').display_name].sort());
    const differing = await page
      .locator('#diff-table tr.differs')
      .evaluateAll((trs) => trs.map((t) => (t as HTMLElement).dataset.key));
    assert.ok(
      differing.includes('train.lr') && differing.includes('model.freeze') && differing.includes('name'),
      `${differing}`,
    );
    const same = page.locator('#diff-table tr[data-key="data.image_size"]');
    assert.equal((await same.getAttribute('class')) ?? '', '', 'an equal field is listed, not highlighted');
    const bg = (sel: string) =>
      page
        .locator(sel)
        .first()
        .evaluate((td) => getComputedStyle(td).backgroundColor);
    assert.notEqual(await bg('#diff-table tr.differs td'), await bg('#diff-table tr[data-key="data.image_size"] td'));
    const lrRow = await page.locator('#diff-table tr[data-key="train.lr"] td').allTextContents();
    assert.deepEqual(lrRow.slice(1).sort(), ['0.001', '0.05']);

    await page.locator('#diff label.check input').check();
    await until(
      'only the differences',
      async () => (await page.locator('#diff-table tr[data-key="data.image_size"]').count()) === 0,
    );
    assert.equal(await page.locator('#diff-table tbody tr').count(), differing.length);

    await page.screenshot({ path: path.join(OUT, 'runs-table.png'), fullPage: true });
    await page.locator('#compare').click();
    await until('the compare action', async () => actions.some((a) => a.type === 'compare'));
    const compare = actions.find((a) => a.type === 'compare');
    assert.ok(compare && compare.type === 'compare');
    assert.deepEqual(
      compare.runs.map((r) => r.name).sort(),
      [byName('slow').display_name, byName('frozen').display_name].sort(),
    );
    await page.locator('#diff-close').click();
    await until('the diff closed', async () => (await page.locator('#diff-table').count()) === 0);
    assert.deepEqual(page.errors, []);
    await page.close();
  },
);
