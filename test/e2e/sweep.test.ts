// A sweep in the packed .vsix in a real VS Code (code-server), on "This machine", through the UI:
// "Ascend: Start Sweep…" from the palette on a small sweep spec (2 trials of 1 epoch on the e2e
// images, both at once on two CPU slots), the sweep's parent row in Runs with its two trials beneath
// it, both trials ending, the row's words saying so, and the Sweep panel's table of the two trials.
// Screenshots: test-output/e2e/sweep/NN-<step>.png. Needs `bash scripts/install-code-server.sh`.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { waitUntil } from './harness';
import { startSuite, type Suite } from './steps';
import { activeWebview, chooseRow, LONG, MEDIUM, treeRow, treeRows } from './ui';

const SWEEP = 'e2e-sweep';
const BASE = 'e2esw';

const finished = (runDir: string) =>
  existsSync(path.join(runDir, 'events.jsonl')) &&
  readFileSync(path.join(runDir, 'events.jsonl'), 'utf8').includes('"type": "run_finished"');

test(
  'a sweep from the palette: its row in Runs with its trials beneath, both trials end',
  { timeout: 12 * 60_000 },
  async (t) => {
    const s: Suite = await startSuite(t, { name: 'sweep', perClass: 10 });
    const { h } = s;
    const sweepFile = path.join(s.workspace, `${SWEEP}.ascend-sweep.yaml`);
    writeFileSync(
      sweepFile,
      `name: ${SWEEP}
base:
  name: ${BASE}
  data: {train: ${JSON.stringify(s.dataDir)}, image_size: 32, batch_size: 8, workers: 1, val_split: 0.25}
  model: {backbone: resnet18, pretrained: null, freeze: none}
  train: {epochs: 1}
  amp: {level: O0, loss_scale: none}
  checkpoint: {keep_max: 1}
  device: {target: CPU, telemetry_s: 0}
space:
  train.lr: {choices: [0.01, 0.05]}
objective: {metric: best_val_acc}
trials: 2
sampler: grid
pruner: {kind: none}
devices: {ids: [0, 1]}
concurrency: 2
`,
    );
    try {
      await s.step(t, 'start-from-palette', async () => {
        await h.openViewContainer('Ascend', 60_000);
        await h.runCommand('Ascend: Start Sweep…');
        await chooseRow(h, new RegExp(`${SWEEP}\\.ascend-sweep\\.yaml`));
        await waitUntil(
          'the sweep folder',
          () =>
            existsSync(path.join(s.runsRoot, 'sweeps')) && readdirSync(path.join(s.runsRoot, 'sweeps')).length === 1,
          MEDIUM,
        );
      });

      await s.step(t, 'sweep-row-with-trials-beneath', async () => {
        const row = treeRow(h, 'Runs', SWEEP);
        await row.waitFor({ state: 'visible', timeout: MEDIUM });
        await waitUntil(
          'both trials beneath the sweep',
          async () => {
            const level = Number(await row.getAttribute('aria-level'));
            const trials = await Promise.all(
              [0, 1].map(async (n) => {
                const r = treeRow(h, 'Runs', `${BASE}-t${n}`);
                return (await r.count()) > 0 && Number(await r.getAttribute('aria-level')) === level + 1;
              }),
            );
            return trials.every(Boolean);
          },
          LONG,
          async () => JSON.stringify(await treeRows(h, 'Runs')),
        );
        assert.match((await row.locator('.label-description').textContent()) ?? '', /sweep · (running|completed)/);
      });

      await s.step(t, 'both-trials-end', async () => {
        const sweepDir = path.join(s.runsRoot, 'sweeps', readdirSync(path.join(s.runsRoot, 'sweeps'))[0]);
        const runDirs = readdirSync(s.runsRoot)
          .filter((d) => d !== 'sweeps')
          .map((d) => path.join(s.runsRoot, d));
        assert.equal(runDirs.length, 2, `two trial runs: ${runDirs.join(', ')}`);
        await waitUntil(
          'both trial runs to finish',
          () => runDirs.every(finished),
          LONG,
          () => readFileSync(path.join(sweepDir, 'events.jsonl'), 'utf8'),
        );
        // The Runs view lists again while the sweep runs; its row ends with the sweep's counts.
        const row = treeRow(h, 'Runs', SWEEP);
        await waitUntil(
          'the sweep row to show completed · 2/2 trials',
          async () =>
            /completed · 2\/2 trials · best val acc/.test(
              (await row.locator('.label-description').textContent()) ?? '',
            ),
          MEDIUM,
          async () => JSON.stringify(await treeRows(h, 'Runs')),
        );
        // The Sweep panel opened at the start shows both trials and the best one highlighted.
        const panel = activeWebview(h);
        await waitUntil(
          'the Sweep panel to list 2 trials',
          async () => (await panel.locator('#trials tbody tr').count()) === 2,
          MEDIUM,
        );
        assert.equal(await panel.locator('#trials tbody tr.best').count(), 1);
      });
    } finally {
      await s.close();
    }
  },
);
