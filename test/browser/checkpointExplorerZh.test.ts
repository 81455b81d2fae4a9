// The checkpoint explorer in Simplified Chinese, in a real headless Chromium: the host's page
// (explorerHtml) carries the zh-cn bundle for vscode.env.language, webview/shared/l10n.ts reads it,
// and no English is left on the page except what comes from the run (names, paths, ids, numbers).
// A screenshot goes to test-output/ for a look.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import type { ExplorerState } from '../../src/shared/checkpointsProtocol';
import { openWebview, postState, serveWebview, type WebviewHost } from './support';
import * as fake from '../unit/fixtures/fakeVscode';

const root = path.join(__dirname, '..', '..');
let web: WebviewHost;

before(async () => {
  // What VS Code does for a zh-cn display language: env.language and the extension's zh-cn bundle.
  fake.env.language = 'zh-cn';
  fake.l10n.bundle = JSON.parse(readFileSync(path.join(root, 'l10n', 'bundle.l10n.zh-cn.json'), 'utf8'));
  const { explorerHtml } =
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- after the fake vscode (./support) is in place
    require('../../src/vscode/checkpoints/explorer') as typeof import('../../src/vscode/checkpoints/explorer');
  web = await serveWebview({ name: 'checkpoints', html: (w, u) => explorerHtml(w, u) });
});
after(async () => {
  fake.env.language = 'en';
  fake.l10n.bundle = undefined;
  await web?.close();
});

const row = (file: string, step: number, valAcc: number | null, best = false) => ({
  file,
  name: file.split('/')[1],
  epoch: step,
  step,
  loss: 1 / step,
  valLoss: 2 / step,
  valAcc,
  reason: null,
  bytes: 44_767_056,
  createdAt: Date.now() / 1000 - 120,
  best,
  problem: null,
  exports: [],
  evalAcc: null,
  valTop5: null,
});
const files = ['checkpoints/ck-e1-s2.ckpt', 'checkpoints/ck-e1-s3.ckpt'];
const state: ExplorerState = {
  run: {
    name: 'flowers-probe',
    // the user's own words (Chinese here) and a long note: its fold toggle must be Chinese too
    notes: '学习率的基线。\n第二行\n第三行\n第四行',
    tags: ['基线'],
    runId: 'r1',
    target: 'ssh:gpu-box',
    backbone: 'resnet18',
    pretrained: 'mindcv:resnet18',
    weightsSha256: 'ab12cd34ef56'.padEnd(64, '0'),
    preprocess: 'mindcv',
    freeze: 'backbone',
    classes: ['daisy', 'rose'],
    live: false,
    ssh: true,
  },
  rows: [row(files[0], 2, null), row(files[1], 3, 0.75, true)],
  problems: [],
  selected: files[1],
  tensors: null,
  evaluation: null,
  comparison: null,
  gallery: null,
  predictionsComparison: null,
  busy: null,
  error: null,
};

/** Run text and terms kept as they are in Chinese (glossary: docs/glossary.md). */
const FROM_RUN_OR_TERM =
  /flowers-probe|ssh:gpu-box|resnet18|mindcv|backbone|ck-e1-s[23]\.ckpt|checkpoints\/|sha256|[0-9a-f]{12}|MindIR|ONNX|Top-5|MB|min|px|\bs\b/g;

test('the explorer in zh-cn: the table, the buttons and the run header are Chinese', { timeout: 60_000 }, async () => {
  const page = await openWebview(web, { width: 1100, height: 700 });
  assert.equal(await page.evaluate(() => document.documentElement.lang), 'zh-cn');
  await postState(page, state);
  await page.locator('tr.row').first().waitFor();
  const text = await page.locator('body').innerText();
  assert.match(text, /验证准确率/, 'the column headers are translated');
  assert.match(text, /在验证集上评估/, 'the action buttons are translated');
  assert.match(text, /\t2 分钟\t/, "a checkpoint's age");
  assert.equal(await page.locator('.run-meta .notes-toggle').textContent(), '更多', "the notes' fold toggle");
  assert.equal(await page.locator('.run-meta .run-tags').getAttribute('title'), '标签');
  const english = text.replace(FROM_RUN_OR_TERM, '').match(/[A-Za-z]{2,}/g) ?? [];
  mkdirSync(path.join(root, 'test-output'), { recursive: true });
  await page.screenshot({ path: path.join(root, 'test-output', 'checkpoint-explorer-zh-cn.png'), fullPage: true });
  assert.deepEqual(english, [], `English left on the page:\n${text}`);
  await page.close();
});

test(
  'the explorer in zh-cn: the tensor list, its head check, the evaluation and the comparison are Chinese',
  { timeout: 60_000 },
  async () => {
    const page = await openWebview(web, { width: 1100, height: 900 });
    const tensor = (name: string, module: string, trainable: boolean | null, elements: number) => ({
      name,
      shape: [elements],
      dtype: 'Float32',
      elements,
      module,
      trainable,
    });
    await postState(page, {
      ...state,
      run: { ...state.run, classes: ['daisy', 'rose', 'tulip'] },
      tensors: {
        file: files[1],
        total: 11_689_512,
        headOut: 3,
        headMatchesClasses: true,
        tensors: [
          tensor('backbone.conv1.weight', 'backbone.conv1', false, 9408),
          tensor('backbone.layer4.weight', 'backbone.layer4', true, 2_359_296),
          tensor('backbone.layer4.bias', 'backbone.layer4', false, 512),
          tensor('head.weight', 'head', true, 1536),
          tensor('moments.head.weight', 'optimizer', null, 1536),
          tensor('epoch_num', 'run state', null, 1),
        ],
      },
      evaluation: {
        file: files[1],
        data: '/d/val',
        numImages: 1234,
        accuracy: 0.75,
        loss: 0.6,
        classes: ['daisy', 'rose', 'tulip'],
        perClass: ['daisy', 'rose', 'tulip'].map((c) => ({ class: c, precision: 0.5, recall: 1, support: 2 })),
        confusion: [
          [2, 0, 0],
          [0, 2, 0],
          [1, 0, 1],
        ],
        skipped: 2,
        evaluatedAt: 1796215500,
        top5: 1,
        recorded: { kept: 6, total: 6, all: true },
        mistakes: 1,
      },
      comparison: {
        a: files[0],
        b: files[1],
        tensors: [
          { name: 'head.weight', shape: [3, 512], l2: 0.3, rel: 0.1, frozen: false, group: 'head' },
          { name: 'backbone.conv1.weight', shape: [64, 3], l2: 0, rel: 0, frozen: true, group: 'backbone.conv1' },
          { name: 'global_step', shape: [1], l2: 3, rel: 1, frozen: null, group: 'run state' },
        ],
        onlyInA: [],
        onlyInB: [],
        shapeMismatch: ['head.bias', 'head.weight'],
        changed: 2,
        unchanged: 1,
        frozenMaxL2: 0,
      },
    });
    await page.locator('details:has(.module)').first().waitFor();
    const summaries = await page.locator('details summary').allTextContents();
    // each module's mark: frozen, trained, or both in one module
    assert.match(summaries.find((s) => s.startsWith('backbone.conv1')) ?? '', /· 冻结$/, summaries.join('\n'));
    assert.match(summaries.find((s) => s.startsWith('backbone.layer4')) ?? '', /2,359,808 个值 · 部分冻结$/);
    assert.match(summaries.find((s) => s.startsWith('head')) ?? '', /· 已训练$/);
    assert.ok(
      summaries.some((s) => s.startsWith('优化器状态 1 个张量')),
      summaries.join('\n'),
    );
    assert.ok(
      summaries.some((s) => s.startsWith('运行计数器 1 个张量')),
      summaries.join('\n'),
    );
    const text = await page.locator('body').innerText();
    assert.match(text, /✔ 分类头输出 3 个类别（该运行有 3 个）/, 'the head check and the run has N');
    assert.match(text, /11,689,512 个值/, 'counts in the locale');
    assert.match(text, /\/d\/val 中的 1,234 张图像 · 跳过 2 个/, 'the evaluation line');
    assert.match(text, /优化器状态与运行计数器（1）/);
    assert.match(text, /head\.bias、head\.weight/, "a list in Chinese punctuation, not ', '");
    const cells = await page.locator('details table td').allTextContents();
    assert.ok(cells.includes('已训练') && cells.includes('冻结'), cells.join(' | '));
    for (const en of [
      'trained',
      'frozen',
      'mixed',
      'the run has',
      'skipped',
      'Optimizer',
      'optimizer',
      'run state',
      'click',
    ])
      assert.ok(!text.includes(en), `"${en}" on the page:\n${text}`);
    assert.equal(
      await page.locator('table.cm td').first().getAttribute('title'),
      'daisy → daisy: 2（点击查看图像）',
      "a confusion cell's tooltip",
    );
    // Open every module's list: the tensor rows' marks are Chinese too.
    await page
      .locator('details summary')
      .evaluateAll((els) => els.forEach((e) => ((e.parentElement as HTMLDetailsElement).open = true)));
    const english = (await page.locator('body').innerText())
      // tensor and module names, dtypes and class names come from the checkpoint
      .replace(
        /backbone\.\w+(\.\w+)?|head\.\w+|head|global_step|moments\.head\.weight|epoch_num|Float32|daisy|rose|tulip|\/d\/val|L2|logits/g,
        '',
      )
      .replace(FROM_RUN_OR_TERM, '')
      .match(/[A-Za-z]{2,}/g);
    assert.deepEqual(english ?? [], []);
    await page.close();
  },
);
