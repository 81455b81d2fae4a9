// The Preview Data / Classify UI (webview/preview) in a real headless Chromium (playwright-core +
// Debian's /usr/bin/chromium), behind the host's own page and Content-Security-Policy (previewHtml,
// src/vscode/preview/panel.ts): the bundle and its stylesheet load under `default-src 'none'` with
// its nonce; the view model of a real `preview` answer (test/unit/fixtures/preview: the demo shapes
// with a planted duplicate, a broken file and a val folder that leaks) is drawn as bars, warnings
// with their files, and thumbnails that decode; Cancel is live only while the runner works.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { toClassifyView, toPreviewView } from '../../src/core/preview/model';
import { listedFiles, validateUiMessage, type PanelState } from '../../src/shared/previewProtocol';
import { openWebview, postState, sentMessages, serveWebview, type WebviewHost } from './support';

const root = path.join(__dirname, '..', '..');
let web: WebviewHost;

before(async () => {
  const { previewHtml } =
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- after the fake vscode (./support) is in place
    require('../../src/vscode/preview/panel') as typeof import('../../src/vscode/preview/panel');
  web = await serveWebview({ name: 'preview', html: (w, u) => previewHtml(w, u) });
});
after(() => web?.close());

const fixture = (f: string) =>
  JSON.parse(readFileSync(path.join(root, 'test', 'unit', 'fixtures', 'preview', f), 'utf8')) as Record<
    string,
    unknown
  >;
const running: PanelState = {
  kind: 'preview',
  subject: '/tmp/s18b-demo/shapes',
  target: 'this machine',
  ssh: false,
  status: 'running',
  activity: 'Reading images…',
  progress: { done: 1200, total: 20000 },
  error: null,
  preview: null,
  classify: null,
};

const open = () => openWebview(web);
const post = (page: Page, s: PanelState) => postState(page, s);
const sent = sentMessages;
const disabled = (page: Page, id: string) => page.locator(`#${id}`).evaluate((b) => b.hasAttribute('disabled'));

test(
  'preview panel: progress and Cancel while running, then bars, warnings with files, thumbnails',
  { timeout: 60_000 },
  async () => {
    const page = await open();
    await post(page, running);
    await page.locator('#activity').waitFor();
    assert.match((await page.locator('#status').textContent()) ?? '', /Reading images….*1200 \/ 20000/);
    assert.equal(await disabled(page, 'cancel'), false, 'Cancel is live while the runner works');
    assert.equal(await disabled(page, 'rerun'), true);
    await page.locator('#cancel').click();
    assert.equal((await sent(page)).at(-1)?.type, 'cancel');

    const view = toPreviewView(fixture('shapes-val.json'));
    const done: PanelState = { ...running, status: 'done', activity: null, progress: null, preview: view };
    await post(page, done);
    await page.locator('#classes .class-row').first().waitFor();
    assert.equal(await disabled(page, 'cancel'), true, 'nothing to cancel once done');
    assert.equal(await disabled(page, 'rerun'), false);
    assert.deepEqual(
      await page.locator('#classes .class-row .name').allTextContents(),
      view.classes.map((c) => c.name),
    );
    // Bars in proportion: the largest class fills its track, the others their share of it.
    const widths = await page
      .locator('#classes .class-row .fill')
      .evaluateAll((els) =>
        els.map(
          (e) =>
            (e as HTMLElement).getBoundingClientRect().width /
            (e.parentElement as HTMLElement).getBoundingClientRect().width,
        ),
      );
    view.classes.forEach((c, i) =>
      assert.ok(Math.abs(widths[i] - c.share) < 0.01, `${c.name}: ${widths[i]} vs ${c.share}`),
    );
    assert.match((await page.locator('#imbalance').textContent()) ?? '', /Imbalance: 1\.17×/);
    assert.equal(
      await page
        .locator('#classes .track')
        .first()
        .evaluate((e) => getComputedStyle(e).height),
      '12px',
      "the panel's stylesheet (webview/preview/preview.css) is applied",
    );

    // Warnings: the leak first, with the val copy listed; a click asks the host to open that file.
    const kinds = await page
      .locator('#problems .problem')
      .evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.kind));
    assert.deepEqual(kinds, ['leak', 'duplicate', 'skipped', 'tiny']);
    const leak = page.locator('#problems .problem[data-kind="leak"]');
    assert.match((await leak.textContent()) ?? '', /3 validation images are copies of training images/);
    await leak.locator('a.file', { hasText: 'leak.png' }).click();
    const open1 = (await sent(page)).at(-1) as { type: string; path: string };
    assert.deepEqual(open1, { type: 'openFile', path: '/tmp/s18b-demo/val/red circle/leak.png' });
    assert.equal(validateUiMessage(open1, listedFiles(done)).ok, true, 'a message the host accepts');
    assert.match(
      (await page.locator('#problems .problem[data-kind="skipped"]').textContent()) ?? '',
      /broken\.jpg.*cannot identify image file/,
    );

    // Thumbnails: one grid per class, every image decodes (naturalWidth > 0); the toggle shows the augmented ones.
    assert.equal(await page.locator('#thumbs .thumb-class').count(), 4);
    const decoded = async () =>
      page
        .locator('#thumbs .thumb img')
        .evaluateAll((els) =>
          els.map((e) => (e as HTMLImageElement).complete && (e as HTMLImageElement).naturalWidth > 0),
        );
    await page.waitForFunction(() =>
      [...document.querySelectorAll<HTMLImageElement>('#thumbs .thumb img')].every((i) => i.complete),
    );
    const originals = await page
      .locator('#thumbs .thumb img')
      .evaluateAll((els) => els.map((e) => (e as HTMLImageElement).src));
    assert.equal(originals.length, view.thumbnails.shown);
    assert.ok((await decoded()).every(Boolean), 'every original thumbnail decodes');
    await page.locator('vscode-button[data-view="train"]').click();
    await page.waitForFunction(() =>
      [...document.querySelectorAll<HTMLImageElement>('#thumbs .thumb img')].every((i) => i.complete),
    );
    const augmented = await page
      .locator('#thumbs .thumb img')
      .evaluateAll((els) => els.map((e) => (e as HTMLImageElement).src));
    assert.equal(augmented.length, originals.length);
    assert.notDeepEqual(augmented, originals, 'the toggle shows the augmented images');
    assert.ok((await decoded()).every(Boolean), 'every augmented thumbnail decodes');
    assert.equal(await page.locator('#eval-note').count(), 0, 'the preprocessing note belongs to the eval view');
    await page.locator('vscode-button[data-view="eval"]').click();
    assert.match((await page.locator('#eval-note').textContent()) ?? '', /^imagenet preprocessing: shorter side/);
    assert.deepEqual(page.refused, [], 'nothing refused by the CSP');
    await page.close();
  },
);

test(
  'preview panel: a runner error is shown with its message; class names are text, not HTML',
  { timeout: 60_000 },
  async () => {
    const page = await open();
    const doc = fixture('shapes.json');
    const classes = (doc.classes as { name: string }[]).map((c, i) =>
      i === 0 ? { ...c, name: '<img src=x onerror="window.__pwned=1">' } : c,
    );
    const view = toPreviewView({ ...doc, classes });
    await post(page, { ...running, status: 'done', activity: null, progress: null, preview: view });
    await page.locator('#classes .class-row').first().waitFor();
    assert.equal(await page.locator('#classes img').count(), 0);
    assert.equal(await page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned), undefined);
    await post(page, {
      ...running,
      status: 'failed',
      activity: null,
      progress: null,
      error: 'need at least two class folders in /d Fix: put one sub-folder per class in DIR',
    });
    await page.locator('#error').waitFor();
    assert.match(
      (await page.locator('#error').textContent()) ?? '',
      /need at least two class folders.*Fix: put one sub-folder/,
    );
    assert.equal(await disabled(page, 'cancel'), true);
    await page.locator('#rerun').click();
    assert.equal((await sent(page)).at(-1)?.type, 'rerun');
    await page.close();
  },
);

test(
  'classify panel: top-5 bars per image, and a broken file shows its own error beside the others',
  { timeout: 60_000 },
  async () => {
    const page = await open();
    const png = readFileSync(path.join(root, 'media', 'ascend-activity.svg')).toString('base64');
    const view = toClassifyView(
      {
        ckpt: '/runs/r1/checkpoints/a.ckpt',
        classes: ['blue triangle', 'green square', 'red circle', 'yellow cross'],
        device: 'CPU',
        predictions: [
          {
            file: '/img/0000.png',
            top: [
              { class: 'red circle', prob: 0.91 },
              { class: 'yellow cross', prob: 0.05 },
              { class: 'green square', prob: 0.03 },
              { class: 'blue triangle', prob: 0.01 },
            ],
          },
          {
            file: '/img/text.jpg',
            error: {
              kind: 'not_an_image',
              message: "UnidentifiedImageError: cannot identify image file '/img/text.jpg'",
            },
          },
        ],
      },
      new Map([['/img/0000.png', `data:image/svg+xml;base64,${png}`]]),
    );
    await post(page, {
      ...running,
      kind: 'classify',
      subject: view.ckpt,
      status: 'done',
      activity: null,
      progress: null,
      classify: view,
    });
    await page.locator('#predictions .prediction').first().waitFor();
    const ok = page.locator('#predictions .prediction[data-ok="true"]');
    assert.deepEqual(await ok.locator('.pred-row .name').allTextContents(), [
      'red circle',
      'yellow cross',
      'green square',
      'blue triangle',
    ]);
    assert.equal(await ok.locator('.pred-row .count').first().textContent(), '91.0%');
    assert.equal(await ok.locator('img').count(), 1, 'the image beside its answer');
    const bad = page.locator('#predictions .prediction[data-ok="false"]');
    assert.match((await bad.textContent()) ?? '', /text\.jpg.*not_an_image: UnidentifiedImageError/);
    assert.equal(await bad.locator('.pred-row').count(), 0);
    await page.close();
  },
);
