// Preview Data and Classify with Checkpoint in the packed .vsix in a real VS Code (code-server), on
// "This machine", through the UI: the Start wizard's data step offers Preview…; the explorer's
// context menu on the workspace's image folder opens the Preview Data panel, which shows the demo
// shapes' four classes and the duplicate planted in one of them (a warning that names the file); the
// spec file's "Preview data" lens and a run's Runs-view menu preview it again with their own
// settings (image size, split). Then a checkpoint of a run the test trains with the runner's CLI
// (`launch`, outside the editor) classifies one image from the Checkpoints view's context menu and
// one from the explorer's menu on the file: every class once, probabilities that sum to 1.
// Screenshots: test-output/e2e/preview/NN-<step>.png. Needs `bash scripts/install-code-server.sh`.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { SELECTORS, waitUntil, type Harness } from './harness';
import { startSuite, type Suite } from './steps';
import {
  activeWebview,
  chooseRow,
  collapsePane,
  contextMenuOnRow,
  expandPane,
  expandTreeRow,
  LONG,
  MEDIUM,
  openInDialog,
  PYTHON,
  treeRow,
  waitForStep,
} from './ui';
import { REPO_ROOT } from './harness';

const RUN = 'e2e-classify';
const CLASSES = ['blue triangle', 'green square', 'red circle', 'yellow cross'];

/** Launches a short CPU run with the runner's own CLI (detached, as the extension's launches are). */
function launchWithCli(s: Suite): string {
  const spec = path.join(s.tmp, 'classify.json');
  writeFileSync(
    spec,
    JSON.stringify({
      name: RUN,
      data: { train: s.dataDir, image_size: 32, val_split: 0.3, batch_size: 8 },
      model: { backbone: 'resnet18', pretrained: null },
      train: { epochs: 1 },
      amp: { level: 'O0' },
      device: { target: 'CPU' },
    }),
  );
  const out = execFileSync(PYTHON, ['-m', 'ascend_finetune', 'launch', spec, '--runs-root', s.runsRoot], {
    cwd: path.join(REPO_ROOT, 'runner'),
    encoding: 'utf8',
  });
  return (JSON.parse(out) as { run_dir: string }).run_dir;
}

/** Answers code-server's open dialog (a quick input that takes a typed path) with `file`. */
async function pickInOpenDialog(h: Harness, title: RegExp, file: string): Promise<void> {
  const widget = h.page.locator(SELECTORS.quickInput);
  await widget.locator('.quick-input-title', { hasText: title }).waitFor({ state: 'visible', timeout: MEDIUM });
  await h.page.locator(SELECTORS.quickInputRow).first().waitFor({ state: 'visible', timeout: MEDIUM }); // listed
  const box = h.page.locator(SELECTORS.quickInputBox);
  const deadline = Date.now() + MEDIUM;
  for (let attempt = 1; ; attempt++) {
    await box.fill(file);
    const kept = await h.page
      .waitForFunction(
        (v) => (document.querySelector('.quick-input-widget input.input') as HTMLInputElement | null)?.value === v,
        file,
        { timeout: 5000 },
      )
      .then(
        () => true,
        () => false,
      );
    if (kept) {
      await box.press('Enter');
      if (
        await widget.waitFor({ state: 'hidden', timeout: 15_000 }).then(
          () => true,
          () => false,
        )
      )
        return;
    }
    if (Date.now() > deadline) throw new Error(`the open dialog did not take ${file} after ${attempt} tries`);
  }
}

test(
  'Preview Data from the explorer, Classify with Checkpoint from the Checkpoints view',
  { timeout: 20 * 60_000 },
  async (t) => {
    const s: Suite = await startSuite(t, { name: 'preview', perClass: 10 });
    const { h } = s;
    // A planted duplicate: the same bytes twice in one class.
    const dup = path.join(s.dataDir, 'red circle', 'zz-copy.png');
    copyFileSync(path.join(s.dataDir, 'red circle', '0000.png'), dup);
    const runDir = launchWithCli(s);
    const panel = () => activeWebview(h);
    try {
      await s.step(t, 'preview-from-wizard-data-step', async () => {
        // The Start wizard's data step (from the workspace's spec: it lists the spec's data folder) offers
        // Preview…, which opens the panel and leaves the wizard on its step.
        await h.runCommand('Ascend: Start Ascend Fine-Tune from Spec File');
        await openInDialog(h, s.specFile);
        await waitForStep(h, 1);
        await chooseRow(h, 'This machine');
        await waitForStep(h, 2);
        await chooseRow(h, 'Preview…');
        await panel().locator('#classes .class-row').first().waitFor({ state: 'visible', timeout: MEDIUM });
        assert.deepEqual(await panel().locator('#classes .class-row .name').allTextContents(), CLASSES);
        await waitForStep(h, 2); // still on the data step
        await h.page.locator(SELECTORS.quickInputBox).press('Escape');
        await h.page.locator(SELECTORS.quickInput).waitFor({ state: 'hidden', timeout: MEDIUM });
        // Closed, so the explorer's entry below is seen to open a panel of its own.
        await h.page.locator('.tab', { hasText: 'Preview: shapes' }).locator('.codicon-close').click();
        await h.page.locator('.tab', { hasText: 'Preview: shapes' }).waitFor({ state: 'detached', timeout: MEDIUM });
      });

      await s.step(t, 'preview-data-from-explorer', async () => {
        await h.openViewContainer('Explorer', 60_000);
        await contextMenuOnRow(h, path.basename(s.workspace), 'shapes', 'Preview Data');
        await panel().locator('#classes .class-row').first().waitFor({ state: 'visible', timeout: MEDIUM });
        assert.deepEqual(await panel().locator('#classes .class-row .name').allTextContents(), CLASSES);
        const warning = panel().locator('#problems .problem[data-kind="duplicate"]');
        await warning.waitFor({ state: 'visible', timeout: MEDIUM });
        assert.match((await warning.textContent()) ?? '', /exact duplicate.*red circle\/(0000|zz-copy)\.png/);
        // Thumbnails through the run's pipeline: one grid per class.
        assert.equal(await panel().locator('#thumbs .thumb-class').count(), 4);
        assert.equal(await panel().locator('#cancel').getAttribute('disabled'), '', 'nothing to cancel once done');
      });

      await s.step(t, 'preview-data-from-spec-lens', async () => {
        // The workspace's spec (32 px, 20% held out): its data.train line's lens previews with its settings.
        await treeRow(h, path.basename(s.workspace), path.basename(s.specFile)).click();
        await h.page.locator('.tab.active', { hasText: path.basename(s.specFile) }).waitFor({ timeout: MEDIUM });
        await h.page
          .locator('.editor-group-container.active .codelens-decoration a', { hasText: 'Preview data' })
          .first()
          .click({ timeout: MEDIUM });
        const summary = panel().locator('#classes .muted').first();
        await summary.filter({ hasText: /20% of each class held out .* 32 px/ }).waitFor({ timeout: MEDIUM });
        // The eval thumbnails say which preprocessing made them: the run's, as the runner resolved it.
        await panel().locator('vscode-button[data-view="eval"]').click();
        const note = panel().locator('#eval-note');
        await note.waitFor({ state: 'visible', timeout: MEDIUM });
        assert.match(
          (await note.textContent()) ?? '',
          /preprocessing: shorter side resized to 37 px .*centre crop 32 px/,
        );
      });

      let ckpt = '';
      await s.step(t, 'cli-run-completes', async () => {
        await waitUntil(
          `run_finished in ${runDir}`,
          () =>
            existsSync(path.join(runDir, 'events.jsonl')) &&
            readFileSync(path.join(runDir, 'events.jsonl'), 'utf8').includes('"run_finished"'),
          LONG,
          () =>
            existsSync(path.join(runDir, 'console.log')) ? readFileSync(path.join(runDir, 'console.log'), 'utf8') : '',
          500,
        );
        const manifest = JSON.parse(readFileSync(path.join(runDir, 'checkpoints.json'), 'utf8')) as { file: string }[];
        assert.ok(manifest.length > 0, 'the run kept a checkpoint');
        ckpt = path.posix.basename(manifest[manifest.length - 1].file);
        // The run was made outside the editor: a refresh lists it.
        await h.openViewContainer('Ascend', 60_000);
        await h.runCommand('Ascend: Refresh');
      });

      await s.step(t, 'preview-data-of-a-run', async () => {
        // The run's own spec.json (30% held out) decides the split the panel shows.
        await contextMenuOnRow(h, 'Runs', RUN, 'Preview Data');
        const summary = panel().locator('#classes .muted').first();
        await summary.filter({ hasText: /30% of each class held out .* 32 px/ }).waitFor({ timeout: MEDIUM });
      });

      await s.step(t, 'classify-with-checkpoint', async () => {
        await collapsePane(h, 'Targets');
        await expandPane(h, 'Checkpoints');
        await expandTreeRow(h, 'Checkpoints', RUN);
        await treeRow(h, 'Checkpoints', ckpt).waitFor({ state: 'visible', timeout: MEDIUM });
        await contextMenuOnRow(h, 'Checkpoints', ckpt, 'Classify with Checkpoint…');
        const image = path.join(s.dataDir, 'yellow cross', '0003.png');
        await pickInOpenDialog(h, /Classify which images/, image);
        const answer = panel().locator('#predictions .prediction').first();
        await answer.waitFor({ state: 'visible', timeout: LONG });
        assert.equal(await answer.getAttribute('data-ok'), 'true', (await answer.textContent()) ?? '');
        assert.equal(await answer.getAttribute('data-file'), image);
        const names = await answer.locator('.pred-row .name').allTextContents();
        assert.deepEqual([...names].sort(), CLASSES, 'every class of the run, once');
        const probs = (await answer.locator('.pred-row .count').allTextContents()).map((p) => parseFloat(p) / 100);
        assert.ok(Math.abs(probs.reduce((a, b) => a + b, 0) - 1) < 0.01, `probabilities sum to 1: ${probs.join(', ')}`);
        assert.deepEqual(
          probs,
          [...probs].sort((a, b) => b - a),
          'most probable first',
        );
        assert.equal(await answer.locator('img').count(), 1, 'the image beside its answer');
      });

      await s.step(t, 'classify-image-from-explorer', async () => {
        // An image file's explorer menu: the file is given, the checkpoint is picked.
        await h.openViewContainer('Explorer', 60_000);
        const ws = path.basename(s.workspace);
        await expandTreeRow(h, ws, 'shapes');
        await expandTreeRow(h, ws, 'green square');
        await contextMenuOnRow(h, ws, '0004.png', 'Classify with Checkpoint…');
        await chooseRow(h, new RegExp(ckpt.replace(/[.]/g, '\\.')));
        const image = path.join(s.dataDir, 'green square', '0004.png');
        // This opens a second Classify panel; while it takes the editor, the first one (with its
        // answer for 0003.png) can still be the visible webview, so wait for this file's answer.
        const answer = panel().locator(`#predictions .prediction[data-file=${JSON.stringify(image)}]`);
        await answer.waitFor({ state: 'visible', timeout: LONG });
        assert.equal(await panel().locator('#predictions .prediction').count(), 1, 'one image asked, one answer');
        assert.equal(await answer.getAttribute('data-ok'), 'true', (await answer.textContent()) ?? '');
        assert.equal(await answer.locator('.pred-row').count(), 4);
      });
    } finally {
      await s.close();
    }
  },
);
