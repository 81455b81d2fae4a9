// Checkpoints in the packed .vsix in a real VS Code (code-server), on "This machine", through the UI
// only: a short run's checkpoints in the Checkpoints view with the best starred; the checkpoint
// explorer (its table, a checkpoint's tensors, Evaluate on the val set); Fine-tune from the best
// checkpoint through the pre-filled Start wizard (the new run's spec.json names it as pretrained);
// Resume from a non-final checkpoint through the tree's context menu and its modal (the new run
// starts after the checkpoint's step and ends at the original's total).
// Screenshots: test-output/e2e/checkpoints/NN-<step>.png. Needs `bash scripts/install-code-server.sh`.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { escapeRegExp, waitUntil } from './harness';
import { startSuite, type Suite } from './steps';
import {
  acceptPrefilledWizard,
  activeWebview,
  answerDialog,
  collapsePane,
  contextMenuOnRow,
  expandPane,
  expandTreeRow,
  LONG,
  MEDIUM,
  runDirOf,
  startRunFromSpec,
  treeRow,
  treeRowIcon,
  waitForRunState,
} from './ui';

const TARGET = 'This machine';
const RUN = 'e2e-ck';
const EPOCHS = 3;
const BATCH = 8;
const VIEW = 'Checkpoints';

interface ManifestEntry {
  file: string;
  epoch: number;
  step: number;
  best: boolean;
}

interface RunEvent {
  type: string;
  step?: number;
  total_steps?: number;
  num_val?: number;
  resumed_from?: { file: string; step: number } | null;
  status?: string;
}

const manifest = (runDir: string) => JSON.parse(readFileSync(path.join(runDir, 'checkpoints.json'), 'utf8')) as ManifestEntry[];
const events = (runDir: string) =>
  readFileSync(path.join(runDir, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as RunEvent);
const finished = (runDir: string) => existsSync(path.join(runDir, 'events.jsonl')) && events(runDir).find((e) => e.type === 'run_finished');

/** Waits for a run folder's run_finished event (the runner's own record) and checks it completed. */
async function waitFinished(runDir: string): Promise<RunEvent[]> {
  await waitUntil(`run_finished in ${runDir}`, () => Boolean(finished(runDir)), LONG, () => (existsSync(path.join(runDir, 'console.log')) ? readFileSync(path.join(runDir, 'console.log'), 'utf8') : ''), 500);
  const all = events(runDir);
  assert.equal(all.find((e) => e.type === 'run_finished')?.status, 'completed', `${runDir} did not complete`);
  return all;
}

test('checkpoints in the .vsix: view, explorer, evaluate, fine-tune from, resume', { timeout: 20 * 60_000 }, async (t) => {
  // 10 images per class, 20% held out: 32 to train on, 4 steps per epoch at batch 8.
  const s: Suite = await startSuite(t, { name: 'checkpoints', perClass: 10 });
  const { h, notes } = s;
  let runDir = '';
  let entries: ManifestEntry[] = [];
  let best: ManifestEntry | undefined;
  const base = (e: ManifestEntry) => path.posix.basename(e.file);
  const explorer = () => activeWebview(h);
  try {
    await s.step(t, 'short-run-completes', async () => {
      await h.openViewContainer('Ascend', 60_000);
      await startRunFromSpec(h, s.specFile, { target: TARGET, dataDir: s.dataDir, backbone: 'resnet18', epochs: EPOCHS, batchSize: BATCH, name: RUN });
      await waitForRunState(h, RUN, 'completed', LONG, (r) => new RegExp(`epoch ${EPOCHS}/${EPOCHS}`).test(r.text));
      runDir = runDirOf(s.runsRoot, RUN)!;
      assert.ok(runDir, `no run folder for ${RUN}`);
      entries = manifest(runDir);
      // One checkpoint per epoch end, the default keep_max (5) keeps all of them.
      assert.deepEqual(entries.map((e) => e.epoch), [1, 2, 3]);
      best = entries.find((e) => e.best);
      assert.ok(best, 'checkpoints.json marks no checkpoint best');
    });

    await s.step(t, 'checkpoints-view-stars-best', async () => {
      // Three views share the side bar: the Targets one gives its height to the checkpoints.
      await collapsePane(h, 'Targets');
      await expandPane(h, VIEW);
      await expandTreeRow(h, VIEW, RUN);
      for (const e of entries) await treeRow(h, VIEW, base(e)).waitFor({ state: 'visible', timeout: MEDIUM });
      for (const e of entries) assert.equal(await treeRowIcon(h, VIEW, base(e)), e.best ? 'star-full' : 'database', `${base(e)}'s icon`);
      // Its description: epoch/step and val accuracy.
      const text = (await treeRow(h, VIEW, base(best!)).locator('.label-description').textContent()) ?? '';
      assert.match(text, new RegExp(`e${best!.epoch}\\b.*\\d+(\\.\\d+)?%`), text);
    });

    await s.step(t, 'explorer-table-and-tensors', async () => {
      // A click on a checkpoint opens the run's explorer with that checkpoint selected.
      await treeRow(h, VIEW, base(best!)).click();
      const rows = explorer().locator('tbody tr.row');
      await waitUntil('the explorer to list the run\'s checkpoints', async () => (await rows.count().catch(() => 0)) === entries.length, MEDIUM);
      const names = await rows.evaluateAll((trs) => trs.map((tr) => tr.children[2]?.textContent ?? ''));
      assert.deepEqual([...names].sort(), entries.map(base).sort());
      const starred = await rows.evaluateAll((trs) => trs.filter((tr) => tr.children[1]?.textContent === '★').map((tr) => tr.children[2]?.textContent));
      assert.deepEqual(starred, [base(best!)]);
      // The selected checkpoint's tensors (inspect): the head, with its output size checked against the classes.
      const tensors = explorer().getByRole('heading', { name: new RegExp(`^Tensors of ${escapeRegExp(base(best!))} \\(\\d+`) });
      await tensors.waitFor({ state: 'visible', timeout: MEDIUM });
      await explorer().getByText(/The head outputs 4 classes \(the run has 4\)/).waitFor({ state: 'visible', timeout: MEDIUM });
      assert.ok((await explorer().locator('details summary .module').count()) > 1, 'the tensors are not grouped by module');
    });

    await s.step(t, 'evaluate-in-explorer', async () => {
      await explorer().locator('vscode-button', { hasText: 'Evaluate on val set' }).click();
      const heading = explorer().getByRole('heading', { name: `Evaluation of ${base(best!)}` });
      await heading.waitFor({ state: 'visible', timeout: LONG });
      const numVal = events(runDir).find((e) => e.type === 'run_started')!.num_val!;
      const summary = (await explorer().getByText(/^Accuracy \d+(\.\d)?% · loss/).textContent({ timeout: MEDIUM })) ?? '';
      assert.match(summary, new RegExp(`· ${numVal} images in `));
      // The result is kept next to the checkpoint.
      const kept = JSON.parse(readFileSync(path.join(runDir, `${best!.file}.eval.json`), 'utf8')) as { accuracy: number; num_images: number };
      assert.equal(kept.num_images, numVal);
      assert.ok(summary.includes(`Accuracy ${(kept.accuracy * 100).toFixed(1)}%`), `${summary} vs ${kept.accuracy}`);
    });

    const ft = `${RUN}-ft`;
    await s.step(t, 'fine-tune-from-best', async () => {
      await explorer().locator('vscode-button', { hasText: 'Fine-tune from it' }).click();
      const abs = path.join(runDir, best!.file);
      await acceptPrefilledWizard(h, {
        target: new RegExp(`^${TARGET}`),
        dataFolder: new RegExp(`Use this folder\\s*${escapeRegExp(s.dataDir)}$`),
        backbone: /^resnet18/,
        pretrained: new RegExp(`^${escapeRegExp(base(best!))}\\s*${escapeRegExp(abs)}$`),
        freeze: /^backbone/,
        amp: /^O0/,
        epochs: String(EPOCHS),
        batchSize: String(BATCH),
        lr: '0.01',
        name: ft,
        launch: new RegExp(`Launch on ${TARGET}`),
      });
      await notes.waitFor(new RegExp(`Started Ascend run "${escapeRegExp(ft)}" on ${TARGET}`), MEDIUM);
      const ftDir = runDirOf(s.runsRoot, ft);
      assert.ok(ftDir, `no run folder for ${ft}`);
      const spec = JSON.parse(readFileSync(path.join(ftDir, 'spec.json'), 'utf8')) as { model: { pretrained: string }; train: { epochs: number } };
      assert.equal(spec.model.pretrained, abs);
      assert.equal(spec.train.epochs, EPOCHS);
      await waitForRunState(h, ft, 'completed', LONG, (r) => new RegExp(`epoch ${EPOCHS}/${EPOCHS}`).test(r.text));
      // The Checkpoints view shows the new run's checkpoints under the one it started from.
      await expandTreeRow(h, VIEW, ft);
      await treeRow(h, VIEW, `from ${base(best!)}`).waitFor({ state: 'visible', timeout: MEDIUM });
    });

    await s.step(t, 'resume-from-first', async () => {
      const first = entries[0];
      assert.ok(first.step < entries[entries.length - 1].step);
      const original = events(runDir);
      const total = original.find((e) => e.type === 'run_started')!.total_steps!;
      const before = new Set(readdirSync(s.runsRoot));
      await h.page.keyboard.press('Escape'); // nothing left open over the side bar
      await contextMenuOnRow(h, VIEW, base(first), 'Resume Run from Checkpoint');
      const asked = await answerDialog(h, new RegExp(`Resume "${escapeRegExp(RUN)}" from ${escapeRegExp(base(first))}\\?`), 'Resume');
      assert.match(asked, new RegExp(`continues from step ${first.step} with the same spec`));
      const resumedId = /Resumed as (\S+)\./.exec(await notes.waitFor(/^Resumed as \S+\.$/, MEDIUM))![1];
      assert.ok(!before.has(resumedId), 'the resume reused an existing run folder');
      const all = await waitFinished(path.join(s.runsRoot, resumedId));
      const started = all.find((e) => e.type === 'run_started')!;
      assert.deepEqual(started.resumed_from, { file: path.join(runDir, first.file), step: first.step });
      assert.equal(started.total_steps, total);
      const steps = all.filter((e) => e.type === 'step').map((e) => e.step!);
      assert.equal(steps[0], first.step + 1, 'the resumed run did not start after the checkpoint');
      assert.equal(steps[steps.length - 1], total, 'the resumed run did not go to the original total');
      // The Runs view shows both segments of the run under its name, completed.
      await waitUntil('two completed runs named ' + RUN, async () => {
        const icons = await h
          .viewPane('Runs')
          .locator('.monaco-list-row')
          .filter({ has: h.page.locator('.label-name', { hasText: new RegExp(`^\\s*${escapeRegExp(RUN)}\\s*$`) }) })
          .locator('.custom-view-tree-node-item-icon')
          .evaluateAll((els) => els.map((e) => e.className));
        return icons.length === 2 && icons.every((c) => c.includes('codicon-pass'));
      }, MEDIUM);
    });
  } finally {
    await s.close();
  }
});
