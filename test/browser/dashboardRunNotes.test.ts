// A run's notes and tags in the dashboard header (issue 17), in a real Chromium behind the real
// browser server, on a REAL short CPU run of the runner (resnet18 at 32 px, one epoch) whose
// meta.json is written by the runner's `meta` command, as Edit Run Notes… and Tag Run… do: the tags
// are chips, the notes are text (HTML in them stays text), and long notes fold with a "more" toggle.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { startDashboardServer, type DashboardServer } from '../../src/core/dashboard/server';
import { runRunner } from '../../src/core/targets/runnerCli';
import { buildWebview, launchChromium, makeDemoData, RUNNER } from './support';
const HOSTILE = '<img src=x onerror="window.__xss=1">';
const NOTES = [
  `Baseline ${HOSTILE} at lr 0.01.`,
  'Second line: the val set is small.',
  'Third line.',
  'Fourth line: only shown after "more".',
  'Fifth line.',
].join('\n');

describe('run notes and tags in the dashboard header, on a real CPU run', { timeout: 600_000 }, () => {
  const tmp = mkdtempSync(path.join(tmpdir(), 'dash-notes-'));
  const runsRoot = path.join(tmp, 'runs');
  const runDir = path.join(runsRoot, 'run-notes');
  let srv: DashboardServer;
  let browser: Browser;
  const pageErrors: string[] = [];

  before(async () => {
    const assets = path.join(tmp, 'assets');
    await buildWebview('dashboard', path.join(assets, 'dashboard.js'));
    const train = await makeDemoData(path.join(tmp, 'data'), 4);
    mkdirSync(runsRoot);
    const spec = {
      name: 'notes-run',
      data: { train: train, image_size: 32, batch_size: 8, workers: 1, val_split: 0.25 },
      model: { backbone: 'resnet18', freeze: 'none' },
      train: { epochs: 1, lr: 0.01 },
      amp: { level: 'O0', loss_scale: 'none' },
      checkpoint: { every_steps: 1000 },
      device: { target: 'CPU' },
    };
    writeFileSync(path.join(tmp, 'spec.json'), JSON.stringify(spec));
    await runRunner(RUNNER, ['train', path.join(tmp, 'spec.json'), '--run-dir', runDir], { timeoutMs: 400_000 });
    // What Edit Run Notes… and Tag Run… do: the runner's `meta` writes meta.json.
    await runRunner(RUNNER, ['meta', runDir, '--notes', NOTES, '--tag', 'baseline', '--tag', '<b>lr-0.01</b>']);
    srv = await startDashboardServer({ path: runsRoot, assetsDir: assets, rescanMs: 100 });
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await srv?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  async function open(): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1200, height: 1200 } });
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.goto(`${srv.url}&run=${srv.runs()[0].key}`);
    await page.locator('.run-name').filter({ hasText: 'notes-run' }).waitFor({ timeout: 60_000 });
    return page;
  }

  test('the header shows the tags as chips and the notes as text, folded with a "more" toggle', async () => {
    const page = await open();
    assert.deepEqual(await page.locator('.run-meta .tag-chip').allTextContents(), ['baseline', '<b>lr-0.01</b>']);
    const notes = page.locator('.run-meta .run-notes');
    assert.equal(await notes.textContent(), NOTES, 'the notes exactly as written, HTML included as text');
    assert.equal(await page.locator('header img, .run-meta img, .run-meta b').count(), 0, 'nothing in them is HTML');
    assert.equal(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss), undefined);

    // Five lines folded to three: the fourth is cut off until "more" is clicked.
    const lineHeight = await notes.evaluate((e) => parseFloat(getComputedStyle(e).lineHeight));
    const folded = (await notes.boundingBox())!.height;
    assert.ok(folded <= lineHeight * 3.5, `folded notes are about 3 lines high (${folded}px, line ${lineHeight}px)`);
    const toggle = page.locator('.run-meta .notes-toggle');
    assert.equal(await toggle.textContent(), 'more');
    await toggle.click();
    const unfolded = (await notes.boundingBox())!.height;
    assert.ok(unfolded >= lineHeight * 4.5, `unfolded notes show all 5 lines (${unfolded}px)`);
    assert.equal(await toggle.textContent(), 'less');
    await toggle.click();
    assert.ok((await notes.boundingBox())!.height <= lineHeight * 3.5, 'folded again');
    await page.close();
  });

  test('an edit with the `meta` command shows in an open tab at once; no notes and no tags: no box', async () => {
    const page = await open();
    await runRunner(RUNNER, ['meta', runDir, '--notes', 'short note', '--untag', 'baseline']);
    await page
      .locator('.run-meta .run-notes')
      .filter({ hasText: /^short note$/ })
      .waitFor({ timeout: 30_000 });
    assert.equal(await page.locator('.run-meta .notes-toggle').isVisible(), false, 'a short note has no toggle');
    assert.deepEqual(await page.locator('.run-meta .tag-chip').allTextContents(), ['<b>lr-0.01</b>']);

    await runRunner(RUNNER, ['meta', runDir, '--notes', '', '--untag', '<b>lr-0.01</b>', '--name', 'renamed run']);
    await page.locator('.run-name').filter({ hasText: 'renamed run' }).waitFor({ timeout: 30_000 });
    assert.equal(await page.locator('.run-meta').isVisible(), false, 'no notes and no tags: no empty box');
    await page.close();
  });

  test('a meta.json with a wrong-typed field is reported by name, the rest still shows', async () => {
    writeFileSync(path.join(runDir, 'meta.json'), JSON.stringify({ name: 'renamed', notes: 'kept', tags: 'oops' }));
    const page = await browser.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.goto(`${srv.url}&run=${srv.runs()[0].key}`);
    await page
      .locator('.run-name')
      .filter({ hasText: /^renamed$/ })
      .waitFor({ timeout: 60_000 });
    assert.equal(await page.locator('.run-meta .run-notes').textContent(), 'kept');
    await page
      .getByText(/meta\.json: tags must be a list of strings/)
      .first()
      .waitFor({ timeout: 10_000 });
    await page.close();
  });

  test('the page had no errors', () => {
    assert.deepEqual(pageErrors, []);
  });
});
