// The checkpoint explorer UI (webview/checkpoints) in a real headless Chromium (playwright-core +
// Debian's /usr/bin/chromium), behind the host's own page and Content-Security-Policy
// (explorerHtml, src/vscode/checkpoints/explorer.ts): the bundle and its stylesheet must load under
// `default-src 'none'` with its nonce, draw the host's snapshot with run text as text, sort, and
// send the messages the host validates.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { validateUiMessage, type ExplorerState } from '../../src/shared/checkpointsProtocol';
import { openWebview, postState, sentMessages, serveWebview, type WebviewHost } from './support';

let web: WebviewHost;

before(async () => {
  const { explorerHtml } =
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- after the fake vscode (./support) is in place
    require('../../src/vscode/checkpoints/explorer') as typeof import('../../src/vscode/checkpoints/explorer');
  web = await serveWebview({ name: 'checkpoints', html: (w, u) => explorerHtml(w, u) });
});
after(() => web?.close());

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
  valTop5: null,
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
  gallery: null,
  predictionsComparison: null,
  busy: null,
  error: null,
};

const open = () => openWebview(web);
const post = (page: Page, s: ExplorerState) => postState(page, s);
const sent = sentMessages;
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
        top5: 1,
        recorded: null,
        mistakes: 0,
      },
      comparison: {
        a: files[0],
        b: files[2],
        tensors: [
          { name: 'head.weight', shape: [4, 512], l2: 0.3, rel: 0.1, frozen: false, group: 'head' },
          {
            name: 'backbone.conv1.weight',
            shape: [64, 3, 7, 7],
            l2: 0,
            rel: 0,
            frozen: true,
            group: 'backbone.conv1',
          },
        ],
        onlyInA: [],
        onlyInB: [],
        shapeMismatch: [],
        changed: 1,
        unchanged: 1,
        frozenMaxL2: 0,
      },
    });
    await page.locator('details:has(.module)').first().waitFor();
    assert.deepEqual(await page.locator('details summary .module').allTextContents(), [
      'backbone.conv1',
      'backbone.layer1',
      'head',
    ]);
    const modules = page.locator('details:has(.module)');
    assert.match((await modules.nth(0).locator('summary').textContent()) ?? '', /frozen/);
    assert.match((await modules.nth(2).locator('summary').textContent()) ?? '', /trained/);
    assert.match((await page.locator('body').textContent()) ?? '', /✖ The head outputs 5 classes, the run has 4/);
    assert.equal(await page.locator('table.cm tbody td').count(), 16, 'a 4x4 confusion matrix');
    assert.match((await page.locator('body').textContent()) ?? '', /Accuracy 75\.0% .* 8 images in \/d\/val/);
    assert.match((await page.locator('body').textContent()) ?? '', /✔ The frozen part is unchanged/);
    await page.locator('vscode-button', { hasText: 'Export ONNX' }).click();
    await page.locator('vscode-button', { hasText: 'Download' }).click();
    await page.locator('vscode-button', { hasText: 'Classify images…' }).click();

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
        { type: 'action', action: 'classify', file: files[1] },
      ],
    );
    assert.deepEqual((page as unknown as { refused: string[] }).refused, [], 'no CSP violations');
    await page.close();
  },
);

test(
  'the predictions gallery: a confusion cell asks for its images, which show as thumbnails under the CSP; mistakes, comparisons and folded tensors',
  { timeout: 60_000 },
  async () => {
    const page = await open();
    const classes = ['cat', '$(rm -rf ~) <b>dog</b>', 'bird'];
    const evaluation: ExplorerState['evaluation'] = {
      file: files[1],
      data: '/d/val',
      numImages: 9,
      accuracy: 6 / 9,
      loss: 0.7,
      classes,
      perClass: [
        { class: classes[0], precision: 0.75, recall: 1, support: 3 },
        { class: classes[1], precision: 0.6, recall: 1, support: 3 },
        { class: classes[2], precision: null, recall: 0, support: 3 },
      ],
      confusion: [
        [3, 0, 0],
        [0, 3, 0],
        [1, 2, 0],
      ],
      skipped: 0,
      evaluatedAt: 1796215500,
      top5: 1,
      recorded: { kept: 9, total: 9, all: true },
      mistakes: 3,
    };
    await post(page, { ...state, run: { ...state.run, classes }, selected: files[1], evaluation });
    await page.locator('table.cm').waitFor();
    const body = async () => (await page.locator('body').textContent()) ?? '';
    assert.match(await body(), /top-5 100\.0% \(5 classes or fewer: 1 by definition\)/);
    assert.match(await body(), /never predicted/, 'a class no image was predicted as says so');
    assert.match(await body(), /every image's prediction recorded \(9\)/);
    // row "bird", column "dog": the bird images taken for dogs
    await page.locator('table.cm tbody tr').nth(2).locator('td').nth(1).click();
    await page.locator('vscode-button', { hasText: 'Most confident mistakes (3)' }).click();

    // The host's answer: the cell's images with thumbnails (JPEGs made here by the browser's own canvas).
    const jpeg = await page.evaluate(() => {
      const c = document.createElement('canvas');
      c.width = 8;
      c.height = 6;
      const g = c.getContext('2d')!;
      g.fillStyle = '#c81e1e';
      g.fillRect(0, 0, 8, 6);
      return c.toDataURL('image/jpeg').split(',')[1];
    });
    const item = (file: string, p: number, thumb: string | null) => ({
      file,
      label: 2,
      top: [
        [1, p],
        [2, 1 - p],
      ] as [number, number][],
      thumb,
      thumbError: thumb ? null : 'a symlink out of the data folder: not read',
    });
    await post(page, {
      ...state,
      run: { ...state.run, classes },
      selected: files[1],
      evaluation,
      gallery: {
        file: files[1],
        what: { kind: 'cell', row: 2, col: 1 },
        count: 2,
        recorded: 2,
        items: [item('bird/"><img src=x onerror=1>.jpg', 0.9, jpeg), item('bird/b.jpg', 0.6, null)],
      },
    });
    await page.locator('.gallery figure').first().waitFor();
    assert.match(
      (await page.locator('.gallery h3').textContent()) ?? '',
      /true bird → predicted \$\(rm -rf ~\) <b>dog<\/b>/,
    );
    assert.match(await body(), /2 images in this cell; 2 recorded by the evaluation, the most confident first/);
    const shots = page.locator('.gallery figure');
    assert.equal(await shots.count(), 2);
    assert.match((await shots.nth(0).textContent()) ?? '', /"><img src=x onerror=1>\.jpg.*true: bird.*dog<\/b> 90\.0%/);
    const size = await shots
      .nth(0)
      .locator('img')
      .evaluate((img: HTMLImageElement) => img.decode().then(() => [img.naturalWidth, img.naturalHeight]));
    assert.deepEqual(size, [8, 6], 'the thumbnail decodes (data: images allowed by the CSP)');
    assert.match((await shots.nth(1).textContent()) ?? '', /a symlink out of the data folder/);
    assert.equal(await page.locator('.gallery img').count(), 1, 'file names never become elements');
    await page.locator('.gallery vscode-button', { hasText: 'Close' }).click();

    // Compare by predictions (two picked), and a tensor comparison whose unchanged frozen tensors fold.
    await page.locator('tr.row', { hasText: 'ck-e1-s2.ckpt' }).locator('input').check();
    await page.locator('tr.row', { hasText: 'ck-e1-s3.ckpt' }).locator('input').check();
    await page.locator('vscode-button', { hasText: 'Compare predictions' }).click();
    const frozen = (i: number) => ({
      name: `backbone.layer1.${i}.conv1.weight`,
      shape: [64, 64, 3, 3],
      l2: 0,
      rel: 0,
      frozen: true,
      group: 'backbone.layer1',
    });
    await post(page, {
      ...state,
      run: { ...state.run, classes },
      comparison: {
        a: files[0],
        b: files[1],
        tensors: [
          { name: 'head.weight', shape: [3, 512], l2: 0.3, rel: 0.1, frozen: false, group: 'head' },
          { name: 'moments.head.weight', shape: [3, 512], l2: 0.2, rel: 0.5, frozen: null, group: 'optimizer' },
          frozen(0),
          frozen(1),
          frozen(2),
          { name: 'step_num', shape: [1], l2: 3, rel: 1, frozen: null, group: 'run state' },
        ],
        onlyInA: [],
        onlyInB: [],
        shapeMismatch: [],
        changed: 3,
        unchanged: 3,
        frozenMaxL2: 0,
      },
      predictionsComparison: {
        a: files[0],
        b: files[1],
        data: '/d/val',
        common: 9,
        accuracyA: 5 / 9,
        accuracyB: 6 / 9,
        perClass: classes.map((c, i) => ({ class: c, recallA: i === 0 ? 2 / 3 : 1, recallB: 1, support: 3 })),
        changedCount: 1,
        fixed: 1,
        broken: 0,
        items: [{ ...item('cat/c.jpg', 0.8, jpeg), label: 0, topB: [[0, 0.7]], kind: 'fixed' }],
      },
    });
    await page.locator('tr.folded').waitFor();
    const tensorRows = await page.locator('table:has(th:text("L2 of difference")) tbody tr').allTextContents();
    assert.equal(tensorRows.length, 5, 'head, the fold line, the group line, moments, step_num');
    assert.match(tensorRows[0], /^head\.weight/);
    assert.match(tensorRows[1], /3 frozen tensors unchanged \(L2 of difference 0, 110,592 values\)/);
    assert.match(tensorRows[2], /Optimizer state and run counters \(2\)/);
    assert.match(tensorRows[3], /^moments\.head\.weight/);
    assert.match(tensorRows[4], /^step_num/);
    assert.match(await body(), /Accuracy 55\.6% → 66\.7% \(\+11\.1 pt\) on 9 images/);
    assert.match(await body(), /1 image changed prediction: 1 fixed, 0 broken/);
    assert.match((await page.locator('.gallery figure').textContent()) ?? '', /fixed by ck-e1-s3\.ckpt/);

    const messages = (await sent(page)) as { type: string }[];
    const known = new Set(files);
    for (const m of messages) assert.ok(validateUiMessage(m, known).ok, `the host would refuse ${JSON.stringify(m)}`);
    assert.deepEqual(
      messages.filter((m) => m.type !== 'ready'),
      [
        { type: 'gallery', file: files[1], what: { kind: 'cell', row: 2, col: 1 } },
        { type: 'gallery', file: files[1], what: { kind: 'mistakes' } },
        { type: 'closeGallery' },
        { type: 'comparePredictions', a: files[0], b: files[1] },
      ],
    );
    assert.deepEqual((page as unknown as { refused: string[] }).refused, [], 'no CSP violations');
    await page.close();
  },
);

test(
  "the run header shows the run's tags as chips and its notes as text, long notes folded",
  { timeout: 60_000 },
  async () => {
    const page = await open();
    const notes = [
      'Baseline <img src=x onerror="window.__pwned=1"> with frozen backbone.',
      'Line two.',
      'Line three.',
      'Line four: hidden until "more".',
    ].join('\n');
    await post(page, { ...state, run: { ...state.run, notes, tags: ['baseline', '<b>frozen</b>'] } });
    await page.locator('tr.row').first().waitFor();
    assert.deepEqual(await page.locator('.run-meta .tag-chip').allTextContents(), ['baseline', '<b>frozen</b>']);
    const p = page.locator('.run-meta .run-notes');
    assert.equal(await p.textContent(), notes, 'the notes as written, HTML as text');
    assert.equal(await page.locator('.run-meta img, .run-meta b').count(), 0);
    assert.equal(await page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned), undefined);
    // folded: the text runs past the box (clamped to three lines); "more" shows all of it
    const cut = () => p.evaluate((e) => e.scrollHeight > e.clientHeight + 1);
    const folded = (await p.boundingBox())!.height;
    assert.equal(await cut(), true, 'folded: part of the notes is hidden');
    await page.locator('.run-meta .notes-toggle', { hasText: 'more' }).click();
    assert.equal(await cut(), false, 'all of the notes after "more"');
    assert.ok((await p.boundingBox())!.height > folded, 'the box grew');
    // the next snapshot (a reload of the run's files) keeps the notes open while they are the same
    await post(page, { ...state, run: { ...state.run, notes, tags: ['baseline'] } });
    await page.locator('.run-meta .notes-toggle', { hasText: 'less' }).waitFor();
    assert.deepEqual(await page.locator('.run-meta .tag-chip').allTextContents(), ['baseline']);
    // no notes and no tags: no empty box
    await post(page, { ...state, run: { ...state.run, notes: '', tags: [] } });
    await page.locator('tr.row').first().waitFor();
    assert.equal(await page.locator('.run-meta').count(), 0);
    assert.deepEqual((page as unknown as { refused: string[] }).refused, [], 'no CSP violations');
    await page.close();
  },
);
