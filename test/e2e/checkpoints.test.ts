// Checkpoints in the packed .vsix in a real VS Code (code-server), on "This machine", through the UI
// only: a short run's checkpoints in the Checkpoints view with the best starred; the checkpoint
// explorer (its table, a checkpoint's tensors, Evaluate on the val set); Fine-tune from the best
// checkpoint through the pre-filled Start wizard (the new run's spec.json names it as pretrained);
// Resume from a non-final checkpoint through the tree's context menu and its modal (the new run
// starts after the checkpoint's step and ends at the original's total). Then, in the explorer:
// Evaluate on a folder whose classes differ (the message names the missing and the extra class),
// Export ONNX (the file, and its row under the checkpoint), Compare two checkpoints (the frozen
// backbone unchanged), Delete of the best (two confirmations; a no to the second keeps it); and
// Prune from the palette (run pick, N, a confirmation listing what goes; checkpoints.json and the
// files on disk keep the best and the newest).
// Screenshots: test-output/e2e/checkpoints/NN-<step>.png. Needs `bash scripts/install-code-server.sh`.
import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync, readFileSync, renameSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { escapeRegExp, waitUntil, type Harness } from './harness';
import { startSuite, type Suite } from './steps';
import {
  acceptPrefilledWizard,
  activeWebview,
  answerDialog,
  answerInput,
  chooseRow,
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

const manifest = (runDir: string) =>
  JSON.parse(readFileSync(path.join(runDir, 'checkpoints.json'), 'utf8')) as ManifestEntry[];
const events = (runDir: string) =>
  readFileSync(path.join(runDir, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as RunEvent);
const finished = (runDir: string) =>
  existsSync(path.join(runDir, 'events.jsonl')) && events(runDir).find((e) => e.type === 'run_finished');

/** Waits for a run folder's run_finished event (the runner's own record) and checks it completed. */
async function waitFinished(runDir: string): Promise<RunEvent[]> {
  await waitUntil(
    `run_finished in ${runDir}`,
    () => Boolean(finished(runDir)),
    LONG,
    () => (existsSync(path.join(runDir, 'console.log')) ? readFileSync(path.join(runDir, 'console.log'), 'utf8') : ''),
    500,
  );
  const all = events(runDir);
  assert.equal(all.find((e) => e.type === 'run_finished')?.status, 'completed', `${runDir} did not complete`);
  return all;
}

/**
 * Runs a palette command that asks for a run and picks the row matching `match` (label and
 * description run together). A pick that closed before the click (focus moved) is asked for again.
 */
async function commandOnMatch(h: Harness, command: string, match: RegExp): Promise<void> {
  const deadline = Date.now() + MEDIUM;
  for (let attempt = 1; ; attempt++) {
    await h.runCommand(command);
    if (
      await chooseRow(h, match, 30_000).then(
        () => true,
        () => false,
      )
    )
      return;
    if (Date.now() > deadline) throw new Error(`"${command}" offered no row matching ${match} after ${attempt} tries`);
    await h.page.keyboard.press('Escape');
  }
}

test(
  'checkpoints in the .vsix: view, explorer, evaluate, fine-tune from, resume, export, compare, delete, prune',
  { timeout: 20 * 60_000 },
  async (t) => {
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
        await startRunFromSpec(h, s.specFile, {
          target: TARGET,
          dataDir: s.dataDir,
          backbone: 'resnet18',
          epochs: EPOCHS,
          batchSize: BATCH,
          name: RUN,
        });
        await waitForRunState(h, RUN, 'completed', LONG, (r) => new RegExp(`epoch ${EPOCHS}/${EPOCHS}`).test(r.text));
        runDir = runDirOf(s.runsRoot, RUN)!;
        assert.ok(runDir, `no run folder for ${RUN}`);
        entries = manifest(runDir);
        // One checkpoint per epoch end, the default keep_max (5) keeps all of them.
        assert.deepEqual(
          entries.map((e) => e.epoch),
          [1, 2, 3],
        );
        best = entries.find((e) => e.best);
        assert.ok(best, 'checkpoints.json marks no checkpoint best');
      });

      await s.step(t, 'checkpoints-view-stars-best', async () => {
        // Three views share the side bar: the Targets one gives its height to the checkpoints.
        await collapsePane(h, 'Targets');
        await expandPane(h, VIEW);
        await expandTreeRow(h, VIEW, RUN);
        for (const e of entries) await treeRow(h, VIEW, base(e)).waitFor({ state: 'visible', timeout: MEDIUM });
        for (const e of entries)
          assert.equal(await treeRowIcon(h, VIEW, base(e)), e.best ? 'star-full' : 'database', `${base(e)}'s icon`);
        // Its description: epoch/step and val accuracy.
        const text = (await treeRow(h, VIEW, base(best!)).locator('.label-description').textContent()) ?? '';
        assert.match(text, new RegExp(`e${best!.epoch}\\b.*\\d+(\\.\\d+)?%`), text);
      });

      await s.step(t, 'explorer-table-and-tensors', async () => {
        // A click on a checkpoint opens the run's explorer with that checkpoint selected.
        await treeRow(h, VIEW, base(best!)).click();
        const rows = explorer().locator('tbody tr.row');
        await waitUntil(
          "the explorer to list the run's checkpoints",
          async () => (await rows.count().catch(() => 0)) === entries.length,
          MEDIUM,
        );
        const names = await rows.evaluateAll((trs) => trs.map((tr) => tr.children[2]?.textContent ?? ''));
        assert.deepEqual([...names].sort(), entries.map(base).sort());
        const starred = await rows.evaluateAll((trs) =>
          trs.filter((tr) => tr.children[1]?.textContent === '★').map((tr) => tr.children[2]?.textContent),
        );
        assert.deepEqual(starred, [base(best!)]);
        // The selected checkpoint's tensors (inspect): the head, with its output size checked against the classes.
        const tensors = explorer().getByRole('heading', {
          name: new RegExp(`^Tensors of ${escapeRegExp(base(best!))} \\(\\d+`),
        });
        await tensors.waitFor({ state: 'visible', timeout: MEDIUM });
        await explorer()
          .getByText(/The head outputs 4 classes \(the run has 4\)/)
          .waitFor({ state: 'visible', timeout: MEDIUM });
        assert.ok(
          (await explorer().locator('details summary .module').count()) > 1,
          'the tensors are not grouped by module',
        );
      });

      await s.step(t, 'evaluate-in-explorer', async () => {
        await explorer().locator('vscode-button', { hasText: 'Evaluate on val set' }).click();
        const heading = explorer().getByRole('heading', { name: `Evaluation of ${base(best!)}` });
        await heading.waitFor({ state: 'visible', timeout: LONG });
        const numVal = events(runDir).find((e) => e.type === 'run_started')!.num_val!;
        const summary =
          (await explorer()
            .getByText(/^Accuracy \d+(\.\d)?% · top-5 100\.0% \(5 classes or fewer: 1 by definition\) · loss/)
            .textContent({ timeout: MEDIUM })) ?? '';
        assert.match(summary, new RegExp(`· ${numVal} images in `));
        // The result is kept next to the checkpoint.
        const kept = JSON.parse(readFileSync(path.join(runDir, `${best!.file}.eval.json`), 'utf8')) as {
          accuracy: number;
          num_images: number;
        };
        assert.equal(kept.num_images, numVal);
        assert.ok(summary.includes(`Accuracy ${(kept.accuracy * 100).toFixed(1)}%`), `${summary} vs ${kept.accuracy}`);
      });

      await s.step(t, 'confusion-cell-images', async () => {
        // The kept result records every image's prediction; a click on the fullest cell shows its images,
        // as thumbnails the runner read from the data folder.
        const kept = JSON.parse(readFileSync(path.join(runDir, `${best!.file}.eval.json`), 'utf8')) as {
          classes: string[];
          confusion: number[][];
          predictions: { file: string; label: number; top: [number, number][] }[];
        };
        assert.equal(
          kept.predictions.length,
          kept.confusion.flat().reduce((a, b) => a + b, 0),
        );
        let [row, col] = [0, 0];
        kept.confusion.forEach((r, i) => r.forEach((v, j) => v > kept.confusion[row][col] && ([row, col] = [i, j])));
        const inCell = kept.predictions.filter((p) => p.label === row && p.top[0][0] === col).map((p) => p.file);
        assert.equal(inCell.length, kept.confusion[row][col]);
        await explorer().locator('table.cm tbody tr').nth(row).locator('td').nth(col).click();
        const title = `Images of true ${kept.classes[row]} → predicted ${kept.classes[col]}`;
        await explorer().getByRole('heading', { name: title }).waitFor({ state: 'visible', timeout: LONG });
        const shots = explorer().locator('.gallery figure');
        await waitUntil("the cell's thumbnails", async () => (await shots.count()) === inCell.length, MEDIUM);
        const shown = await shots.evaluateAll((figs) =>
          figs.map((f) => {
            const img = f.querySelector('img');
            return { file: f.getAttribute('title') ?? '', width: img?.naturalWidth ?? 0 };
          }),
        );
        assert.deepEqual(shown.map((x) => x.file).sort(), [...inCell].sort());
        assert.ok(
          shown.every((x) => x.width > 0),
          `a thumbnail did not decode: ${JSON.stringify(shown)}`,
        );
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
        const spec = JSON.parse(readFileSync(path.join(ftDir, 'spec.json'), 'utf8')) as {
          model: { pretrained: string };
          train: { epochs: number };
        };
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
        const asked = await answerDialog(
          h,
          new RegExp(`Resume "${escapeRegExp(RUN)}" from ${escapeRegExp(base(first))}\\?`),
          'Resume',
        );
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
        await waitUntil(
          'two completed runs named ' + RUN,
          async () => {
            const icons = await h
              .viewPane('Runs')
              .locator('.monaco-list-row')
              // Two runs with one name show the run id's last 4 hex digits: `e2e-ck (1a2b)`.
              .filter({
                has: h.page.locator('.label-name', {
                  hasText: new RegExp(`^\\s*${escapeRegExp(RUN)}( \\([0-9a-f]{4}\\))?\\s*$`),
                }),
              })
              .locator('.custom-view-tree-node-item-icon')
              .evaluateAll((els) => els.map((e) => e.className));
            return icons.length === 2 && icons.every((c) => c.includes('codicon-pass'));
          },
          MEDIUM,
        );
        // ...and the resumed one says what it continues from.
        const resumedRow = h
          .viewPane('Runs')
          .locator('.monaco-list-row')
          .filter({ hasText: `resumed from ${base(first).replace(/\.ckpt$/, '')}` });
        await resumedRow.first().waitFor({ state: 'visible', timeout: MEDIUM });
      });

      // ---- the explorer's other actions, on the original run (its panel is the one explorer open) ----
      const row = (file: string) =>
        explorer()
          .locator('tbody tr.row')
          .filter({ hasText: path.posix.basename(file) });
      const button = (label: string) => explorer().locator('vscode-button', { hasText: label });
      const showExplorer = async (select: ManifestEntry) => {
        await h.page.keyboard.press('Escape');
        await h.page
          .locator('.tabs-container .tab', { hasText: `Checkpoints: ${RUN}` })
          .first()
          .click();
        await row(select.file).click();
        await explorer()
          .getByRole('heading', { name: `Selected: ${base(select)}` })
          .waitFor({ state: 'visible', timeout: MEDIUM });
      };

      await s.step(t, 'evaluate-on-folder-with-other-classes', async () => {
        // The toasts of the runs above would cover the explorer's lower part.
        await h.runCommand('Notifications: Clear All Notifications');
        // Three of the run's classes, and one it does not have.
        const other = path.join(s.workspace, 'other-shapes');
        for (const c of ['blue triangle', 'green square', 'red circle', 'yellow cross'])
          cpSync(path.join(s.dataDir, c), path.join(other, c), { recursive: true });
        renameSync(path.join(other, 'yellow cross'), path.join(other, 'purple hexagon'));
        const keptEval = readFileSync(path.join(runDir, `${best!.file}.eval.json`), 'utf8');
        await showExplorer(best!);
        await button('Evaluate on folder…').click();
        // The pick lists folders on the target from the run's data folder: up to the workspace, into the other one.
        await chooseRow(h, '..');
        await chooseRow(h, 'other-shapes');
        await chooseRow(h, new RegExp(`Use this folder\\s*${escapeRegExp(other)}$`));
        let text = '';
        await waitUntil(
          'the explorer to say why the folder cannot be evaluated',
          async () =>
            /classes differ/.test(
              (text =
                (await explorer()
                  .locator('.error')
                  .textContent({ timeout: 1000 })
                  .catch(() => '')) ?? ''),
            ),
          LONG,
          () => text,
        );
        assert.match(text, /classes differ from the run's/, text);
        assert.match(text, /missing class folder: yellow cross\b/, text);
        assert.match(text, /extra class folder: purple hexagon\b/, text);
        // The kept result of the earlier evaluation is not replaced by the failed one.
        assert.equal(readFileSync(path.join(runDir, `${best!.file}.eval.json`), 'utf8'), keptEval);
      });

      await s.step(t, 'export-onnx', async () => {
        await showExplorer(best!);
        await button('Export ONNX').click();
        const done = await notes.waitFor(/^Exported ONNX: \S+\.onnx \(/, LONG);
        const file = /^Exported ONNX: (\S+\.onnx) \(/.exec(done)![1];
        const want = path.join(runDir, best!.file.replace(/\.ckpt$/, '.onnx'));
        assert.equal(file, want, 'the ONNX file is not next to its checkpoint');
        assert.ok(existsSync(want) && statSync(want).size > 0, `${want} is missing or empty`);
        // The explorer lists the export on the checkpoint's row...
        await waitUntil(
          'the explorer row to list the ONNX export',
          async () =>
            /\bONNX\b/.test(
              (await row(best!.file)
                .locator('td')
                .last()
                .textContent()
                .catch(() => '')) ?? '',
            ),
          MEDIUM,
        );
        // ...and the tree under the checkpoint (the only checkpoint row with children: the resumed run
        // has checkpoints of the same names, without exports).
        const parent = h
          .viewPane(VIEW)
          .locator('.monaco-list-row[aria-expanded]')
          .filter({
            has: h.page.locator('.label-name', { hasText: new RegExp(`^\\s*${escapeRegExp(base(best!))}\\s*$`) }),
          })
          .first();
        await parent.waitFor({ state: 'visible', timeout: MEDIUM });
        if ((await parent.getAttribute('aria-expanded')) === 'false')
          await parent.locator('.monaco-tl-twistie').click();
        const child = treeRow(h, VIEW, path.basename(want));
        await child.waitFor({ state: 'visible', timeout: MEDIUM });
        assert.match((await child.locator('.label-description').textContent()) ?? '', /^ONNX · \d/);
      });

      await s.step(t, 'compare-frozen-backbone-unchanged', async () => {
        const [a, b] = [entries[0], entries[entries.length - 1]];
        await showExplorer(best!);
        for (const e of [a, b]) await row(e.file).locator('input[type=checkbox]').click();
        await button('Compare the two picked').click();
        const heading = explorer().getByRole('heading', { name: `${base(a)} vs ${base(b)}` });
        await heading.waitFor({ state: 'visible', timeout: LONG });
        // The run froze the backbone (the wizard's choice): those tensors did not move, the head did.
        await explorer()
          .getByText('✔ The frozen part is unchanged (max L2 distance 0): freezing worked.')
          .waitFor({ state: 'visible', timeout: MEDIUM });
        const summary = /^(\d+) changed, (\d+) unchanged/.exec(
          (await heading.locator('xpath=following-sibling::div[1]').textContent()) ?? '',
        );
        assert.ok(summary && Number(summary[1]) > 0 && Number(summary[2]) > 0, `summary: ${summary?.[0]}`);
        const rows = await heading
          .locator('xpath=following-sibling::table[1]')
          .locator('tbody tr')
          .evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent ?? '')));
        // The unchanged frozen tensors are folded into one line (their names behind it); no frozen one moved.
        const trained = rows.filter((r) => r[4] === 'trained');
        const folded = rows.findIndex((r) => r.length === 1 && /frozen tensors unchanged/.test(r[0]));
        const fold = /^(\d+) frozen tensors unchanged \(L2 of difference 0, [\d,]+ values\)(.*)$/.exec(
          rows[folded]?.[0] ?? '',
        );
        const names = fold?.[2].split(', ') ?? [];
        assert.ok(
          fold && Number(fold[1]) === names.length && names.length > 0 && names.every((n) => n.startsWith('backbone.')),
          `folded line: ${rows[folded]?.[0].slice(0, 300)}`,
        );
        assert.deepEqual(
          rows.filter((r) => r[4] === 'frozen'),
          [],
          'a frozen tensor that moved would have its own row',
        );
        // Optimizer state and counters come last, under their own line.
        const group = rows.findIndex((r) => r.length === 1 && /^Optimizer state and run counters/.test(r[0]));
        assert.ok(group > folded && group > rows.findIndex((r) => r[0].startsWith('head')), `group line at ${group}`);
        assert.ok(
          trained.some((r) => r[0].startsWith('head') && Number(r[2]) > 0),
          `trained rows: ${JSON.stringify(trained)}`,
        );
      });

      await s.step(t, 'delete-best-asks-twice', async () => {
        await showExplorer(best!);
        await button('Delete…').click();
        const first = await answerDialog(
          h,
          new RegExp(`Delete 1 checkpoint of "${escapeRegExp(RUN)}" on ${TARGET}\\?`),
          'Delete',
        );
        assert.match(first, new RegExp(`${escapeRegExp(base(best!))} \\(.*BEST\\)`), first);
        await answerDialog(
          h,
          new RegExp(`Really delete the BEST checkpoint ${escapeRegExp(base(best!))}\\?`),
          'Cancel',
        );
        assert.ok(
          existsSync(path.join(runDir, best!.file)),
          'the best was deleted after a no to the second confirmation',
        );
        assert.deepEqual(
          manifest(runDir).map((e) => [e.file, e.best]),
          entries.map((e) => [e.file, e.best]),
        );
      });

      await s.step(t, 'prune-keeps-best-and-newest', async () => {
        // Keep the best and the newest 1: the newest, and the best if it is another one.
        const newest = entries[entries.length - 1];
        const kept = entries.filter((e) => e === newest || e.best);
        const dropped = entries.filter((e) => !kept.includes(e));
        assert.ok(dropped.length > 0);
        await h.page.keyboard.press('Escape');
        // Two runs are named e2e-ck (the original and its resumed segment): the pick's row by run id.
        await commandOnMatch(
          h,
          'Ascend: Prune Checkpoints (Keep Best + Newest N)',
          new RegExp(escapeRegExp(path.basename(runDir))),
        );
        await answerInput(h, 'the newest checkpoints to keep besides the best', '1');
        const asked = await answerDialog(
          h,
          new RegExp(`Prune "${escapeRegExp(RUN)}": delete ${dropped.length} checkpoints?\\?`),
          'Delete',
        );
        const [gone, stay] = asked.split('Kept:');
        assert.ok(stay !== undefined && gone.includes('Deleted:'), asked);
        for (const e of dropped)
          assert.ok(gone.includes(base(e)) && !stay.includes(base(e)), `${base(e)} not listed as deleted: ${asked}`);
        for (const e of kept)
          assert.ok(stay.includes(base(e)) && !gone.includes(base(e)), `${base(e)} not listed as kept: ${asked}`);
        assert.match(stay, new RegExp(`${escapeRegExp(base(best!))} \\(.*BEST\\)`));
        // On the target: the manifest names only what is kept, the other files are gone.
        await waitUntil(
          'checkpoints.json to list only the kept checkpoints',
          () =>
            manifest(runDir)
              .map((e) => e.file)
              .join() === kept.map((e) => e.file).join(),
          MEDIUM,
          () => JSON.stringify(manifest(runDir)),
        );
        await waitUntil(
          'the pruned files to be gone',
          () => dropped.every((e) => !existsSync(path.join(runDir, e.file))),
          MEDIUM,
        );
        assert.equal(manifest(runDir).find((e) => e.best)?.file, best!.file, 'the best is no longer marked best');
        for (const e of kept) assert.ok(existsSync(path.join(runDir, e.file)), `${e.file} was deleted`);
        assert.ok(
          existsSync(path.join(runDir, best!.file.replace(/\.ckpt$/, '.onnx'))),
          'the export of the best went too',
        );
        // The explorer shows what is left.
        const rows = explorer().locator('tbody tr.row');
        await waitUntil(
          'the explorer to list the kept checkpoints',
          async () => (await rows.count().catch(() => -1)) === kept.length,
          MEDIUM,
        );
        // A comparison of a checkpoint that is gone is not shown any more.
        const [a, b] = [entries[0], entries[entries.length - 1]];
        const comparison = explorer().getByRole('heading', { name: `${base(a)} vs ${base(b)}` });
        if (dropped.includes(a)) await comparison.waitFor({ state: 'hidden', timeout: MEDIUM });
        else assert.ok(await comparison.isVisible());
      });
    } finally {
      await s.close();
    }
  },
);
