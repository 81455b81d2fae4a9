// Issue 17, "the first hour", as a new user meets it: a fresh profile and no settings but one, a
// workspace with an image folder, and `ascendFinetune.pythonPath` pointing at a Python WITHOUT
// MindSpore (a throwaway `venv --without-pip`). "Start Ascend fine-tune" from the palette first says,
// in one sentence, that this Python cannot import MindSpore; Set Python Path… opens VS Code's file
// dialog, which takes the repo's .venv, checked with `doctor` before it is saved; then the short path:
// the workspace's image folder offered first with its counts, pretrained weights (a checkpoint of a
// resnet18 the set-up trained on other shapes with the runner's CLI, its path typed into the weights
// step), one summary (the backbone from the weights, image size from the data, O0 and no sink on this
// CPU), Launch, and the run completes HEALTHY without a warning about a default the wizard chose.
// Every interaction from the palette to the launch is counted (an accepted pick, a pressed button, a
// typed entry): the short path must take at most five. Last, warnings the user chose (a spec with 16
// loader threads and sink mode on this CPU, a frozen backbone without weights) arrive as one grouped
// notification, the most serious first (ascendFinetune.notifyWarnings is on: the default).
// Screenshots: test-output/e2e/firstHour/NN-<step>.png.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { InteractionCounter, SHORT_PATH_BUDGET } from '../../src/core/wizard/interactions';
import { REPO_ROOT, SELECTORS, startHarness, waitUntil, type Harness } from './harness';
import { killLiveRuns } from './steps';
import {
  LOG_CHANNEL,
  LONG,
  makeImages,
  MEDIUM,
  NotificationRecorder,
  PYTHON,
  runDirOf,
  chooseRow,
  startRunFromSpec,
  waitForRunState,
  waitForPick,
} from './ui';
import { buildVsix } from './vsix';

const RUN = 'shapes-resnet18'; // the default name: the data folder and the backbone (from the weights)
const BURST = 'warned';
const RUNNER_DIR = path.join(REPO_ROOT, 'runner');
const quote = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The weights a user brings: a resnet18 trained with the runner's CLI on other shapes (other seed,
 * 32 px, 4 epochs, as test/runner/conftest.py's task A); its best checkpoint's path.
 */
function pretrainBackbone(dir: string): string {
  const data = path.join(dir, 'shapes-a');
  execFileSync(
    PYTHON,
    ['-m', 'ascend_finetune', 'make-demo-data', data, '--per-class', '40', '--size', '32', '--seed', '1'],
    {
      cwd: RUNNER_DIR,
      stdio: 'pipe',
    },
  );
  const spec = {
    name: 'task-a',
    data: { train: data, image_size: 32, batch_size: 16, workers: 2, val_split: 0.1 },
    model: { backbone: 'resnet18', pretrained: null, freeze: 'none' },
    train: { epochs: 4, lr: 0.01 },
    amp: { level: 'O0', loss_scale: 'none' },
    device: { target: 'CPU' },
  };
  const specFile = path.join(dir, 'task-a.json');
  writeFileSync(specFile, JSON.stringify(spec));
  const run = path.join(dir, 'run');
  execFileSync(PYTHON, ['-m', 'ascend_finetune', 'train', specFile, '--run-dir', run], {
    cwd: RUNNER_DIR,
    stdio: 'pipe',
    timeout: 20 * 60_000,
  });
  const manifest = JSON.parse(readFileSync(path.join(run, 'checkpoints.json'), 'utf8')) as {
    file: string;
    best: boolean;
  }[];
  const best = manifest.find((e) => e.best);
  assert.ok(best, `no best checkpoint in ${JSON.stringify(manifest)}`);
  return path.join(run, best.file);
}

/** The quick input's rows as "label description" lines. */
async function rows(h: Harness): Promise<string[]> {
  return h.page.locator(SELECTORS.quickInputRow).evaluateAll((els) =>
    els.map((el) =>
      ['.label-name', '.label-description']
        .map((s) => el.querySelector(s)?.textContent?.trim() ?? '')
        .filter(Boolean)
        .join(' '),
    ),
  );
}

/** The quick input's rows: the label, and the family heading (separator) the row holds, if any. */
async function catalogRows(h: Harness): Promise<{ label: string; separator: string }[]> {
  return h.page.locator(SELECTORS.quickInputRow).evaluateAll((els) =>
    els.map((el) => {
      const sep = el.querySelector<HTMLElement>('.quick-input-list-separator');
      return {
        label: el.querySelector('.label-name')?.textContent?.trim() ?? '',
        separator: sep && sep.style.display !== 'none' ? (sep.textContent?.trim() ?? '') : '',
      };
    }),
  );
}

/** Clicks the row whose text matches (one interaction). */
async function choose(h: Harness, n: InteractionCounter, what: string, match: RegExp): Promise<void> {
  const r = h.page.locator(SELECTORS.quickInputRow).filter({ hasText: match }).first();
  await r.waitFor({ state: 'visible', timeout: MEDIUM });
  await r.click();
  n.count(what);
}

test(
  'the first hour: health first, Set Python Path, then the short path to a completed run',
  { timeout: 30 * 60_000 },
  async (t) => {
    const outputDir = path.join(REPO_ROOT, 'test-output', 'e2e', 'firstHour');
    rmSync(outputDir, { recursive: true, force: true });
    mkdirSync(outputDir, { recursive: true });
    const tmp = mkdtempSync(path.join(tmpdir(), 'aft-e2e-firsthour-'));
    const workspace = path.join(tmp, 'workspace');
    mkdirSync(workspace, { recursive: true });
    // 4 classes x 60 images of 32 px: 10% held out is 24 to validate, 6 a class (the verdict judges
    // 20 or more, 5 a class).
    makeImages(path.join(workspace, 'shapes'), 60);
    writeFileSync(path.join(workspace, 'README.md'), '# my images\n');
    // A Python without MindSpore (nor numpy): what a new user's system python3 is.
    const bare = path.join(tmp, 'bare-venv');
    execFileSync('python3', ['-m', 'venv', '--without-pip', bare]);
    const barePython = path.join(bare, 'bin', 'python');
    assert.throws(() => execFileSync(barePython, ['-c', 'import numpy'], { stdio: 'pipe' }), 'the bare venv has numpy');
    const t0 = Date.now();
    const weights = pretrainBackbone(path.join(tmp, 'pretrain'));
    t.diagnostic(`pretrained ${weights} in ${((Date.now() - t0) / 1000).toFixed(0)} s`);

    const vsix = buildVsix();
    const h = await startHarness({
      vsix: vsix.file,
      workspace,
      outputDir,
      settings: { 'ascendFinetune.pythonPath': barePython },
      startTimeoutMs: 180_000,
    });
    const runsRoot = path.join(h.home, '.ascend-finetune', 'runs');
    const notes = new NotificationRecorder(h).start();
    const repair = new InteractionCounter();
    const short = new InteractionCounter();
    const all = new InteractionCounter();
    const count = (c: InteractionCounter, what: string) => {
      c.count(what);
      all.count(what);
    };
    const tee = (c: InteractionCounter) => ({ count: (what: string) => count(c, what) }) as InteractionCounter;
    let failed: string | undefined;
    const step = async (name: string, fn: () => Promise<void>) =>
      t.test(name, async (st) => {
        if (failed) return st.skip(`an earlier step failed: ${failed}`);
        const t0 = Date.now();
        try {
          await fn();
          await h.screenshot(name);
          st.diagnostic(`${name}: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
        } catch (e) {
          failed = name;
          await h.saveFailureArtifacts(name).catch(() => undefined);
          writeFileSync(path.join(outputDir, `failure-${name}.extension.log`), h.outputChannelLog(LOG_CHANNEL));
          writeFileSync(
            path.join(outputDir, `failure-${name}.notifications.json`),
            JSON.stringify(notes.seen, null, 2),
          );
          throw e;
        }
      });
    try {
      await step('health-sentence', async () => {
        await h.openViewContainer('Ascend', 60_000);
        await h.runCommand('Ascend: Start Ascend fine-tune');
        count(short, 'palette: Start Ascend fine-tune');
        const sentence = await waitForPick(h, /cannot import MindSpore/);
        assert.match(
          sentence,
          new RegExp(
            `^The Python at ${barePython.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} cannot import MindSpore \\(ModuleNotFoundError`,
          ),
        );
        assert.doesNotMatch(sentence, /runner validate exited/);
        const offered = await rows(h);
        assert.ok(
          offered.some((r) => r.startsWith('Set Python Path…')),
          JSON.stringify(offered),
        );
        assert.ok(
          offered.some((r) => r.startsWith('Create a Python environment with MindSpore')),
          JSON.stringify(offered),
        );
      });

      await step('set-python-path', async () => {
        // Set Python Path… opens VS Code's open-file dialog; in code-server that is the simple file
        // dialog, a quick input listing the current Python's folder that takes a typed path.
        await choose(h, tee(repair), 'Set Python Path…', /Set Python Path…/);
        const title = h.page.locator(`${SELECTORS.quickInput} .quick-input-title`);
        await waitUntil(
          'the open-file dialog',
          async () => /Python with MindSpore/.test((await title.textContent().catch(() => '')) ?? ''),
          MEDIUM,
        );
        // The dialog fills its box with the folder once its listing arrives (and would overwrite a
        // path typed earlier), and a typed path in another folder makes it list that folder, while
        // it takes no Enter. So: the first listing, then the path, then the typed folder's listing
        // (names the bare venv's folder lacks) with the dialog idle, and Enter once. Filling the
        // box is not an action and may be repeated; Enter is pressed once.
        const rowNamed = (names: string[]) =>
          h.page
            .locator(SELECTORS.quickInputRow)
            .filter({
              has: h.page.locator('.label-name', { hasText: new RegExp(`^\\s*(${names.map(quote).join('|')})\\s*$`) }),
            })
            .first();
        await rowNamed(['python3']).waitFor({ state: 'visible', timeout: MEDIUM });
        const bareNames = new Set(readdirSync(path.dirname(barePython)));
        const onlyThere = readdirSync(path.dirname(PYTHON))
          .filter((n) => !bareNames.has(n))
          .sort((a, b) => a.localeCompare(b))
          .slice(0, 3);
        assert.ok(onlyThere.length > 0, `${path.dirname(PYTHON)} lists nothing the bare venv lacks`);
        const box = h.page.locator(SELECTORS.quickInputBox);
        const busy = h.page.locator(`${SELECTORS.quickInput} .quick-input-progress:not(.done)`);
        let value = '';
        await waitUntil(
          `the dialog to list ${path.dirname(PYTHON)} and keep the typed path`,
          async () => {
            if ((value = await box.inputValue()) !== PYTHON) await box.fill(PYTHON);
            return (
              (await rowNamed(onlyThere).isVisible()) &&
              (await busy.count()) === 0 &&
              (await box.inputValue()) === PYTHON
            );
          },
          MEDIUM,
          () => `value: ${value}`,
        );
        await box.press('Enter');
        count(repair, `typed ${PYTHON} into the file dialog`);
        // Checked with doctor, saved, this machine checked again: the wizard goes on to the data.
        await waitForPick(h, /^Training data on This machine/);
        const log = h.outputChannelLog(LOG_CHANNEL);
        assert.match(log, /doctor with .*\.venv\/bin\/python: .*"ok": ?true/);
      });

      await step('short-path-to-launch', async () => {
        const offered = await rows(h);
        assert.match(offered[0] ?? '', /^shapes 4 classes · 240 images · about 32 px$/, JSON.stringify(offered));
        await choose(h, tee(short), 'data: the workspace image folder', /shapes/);
        await waitForPick(h, /^Pretrained weights/);
        // The step offers the recipe backbone's (resnet50's) catalog weights, not the whole catalog,
        // and a row to the rest, which opens it under family headings; Escape comes back to the step.
        // (A detour to look, not counted: the user's path types the checkpoint.)
        const step = await rows(h);
        const shown = JSON.stringify(step);
        assert.ok(
          step.some((r) => /^mindcv:resnet50 .*backbone resnet50$/.test(r)),
          shown,
        );
        assert.deepEqual(
          step.filter((r) => r.startsWith('mindcv:')).map((r) => r.split(' ')[0]),
          ['mindcv:resnet50'],
          shown,
        );
        assert.ok(
          step.some((r) => /^Weights of another backbone… the whole catalog by family/.test(r)),
          shown,
        );
        await chooseRow(h, /Weights of another backbone/);
        await waitForPick(h, /^Weights of any backbone in the catalog/);
        const whole = await catalogRows(h);
        const listed = JSON.stringify(whole);
        // resnet50 (the backbone's own, focused) and its family's others under the "resnet" heading.
        for (const v of ['mindcv:resnet18', 'mindcv:resnet50'])
          assert.ok(
            whole.some((r) => r.label === v),
            `${v} in ${listed}`,
          );
        assert.ok(
          whole.some((r) => r.label === 'resnet' || r.separator === 'resnet'),
          `a "resnet" heading in ${listed}`,
        );
        await h.page.keyboard.press('Escape');
        await waitForPick(h, /^Pretrained weights/);
        // A checkpoint's path typed into the step offers "Use <path>": one interaction.
        await h.page.locator(SELECTORS.quickInputBox).fill(weights);
        await choose(h, tee(short), 'weights: a typed checkpoint path', new RegExp(`Use ${quote(weights)}`));
        await waitForPick(h, /Pick a line to change it, or Launch/);
        const summary = await rows(h);
        await h.screenshot('summary');
        for (const want of [
          /^Launch on This machine/,
          /^Data: .*\/shapes 4 classes, 240 images$/,
          /^Image size: 32 px the images are about 32 px$/,
          /^Backbone: resnet18 what the weights were trained as$/,
          new RegExp(`^Weights: ${quote(weights)}$`),
          /^Freeze: backbone only the new head trains$/,
          /^Mixed precision: O0 fp32: this target has no NPU.*no loss scaling$/,
          /^Epochs: 10$/,
        ])
          assert.ok(
            summary.some((r) => want.test(r)),
            `${want} in ${JSON.stringify(summary)}`,
          );
        await choose(h, tee(short), 'Launch', /Launch on This machine/);
        await notes.waitFor(new RegExp(`Started Ascend run "${RUN}" on This machine`), LONG);
        t.diagnostic(`interactions, palette to launch: ${all}`);
        t.diagnostic(`  one-time Python repair: ${repair}`);
        t.diagnostic(`  short path: ${short}`);
        assert.ok(!short.over(SHORT_PATH_BUDGET), `the short path took ${short}`);
      });

      await step('run-completes-healthy-without-default-warnings', async () => {
        const row = await waitForRunState(h, RUN, 'completed', LONG, (r) => /epoch 10\/10/.test(r.text));
        t.diagnostic(`run row: ${row.text}`);
        const told = await notes.waitFor(new RegExp(`Ascend run "${RUN}" completed`), MEDIUM);
        const runDir = runDirOf(runsRoot, RUN);
        assert.ok(runDir, `no run folder for ${RUN} under ${runsRoot}`);
        // The runner's verdict is healthy, and nothing the user sees says otherwise.
        const lines = readFileSync(path.join(runDir, 'events.jsonl'), 'utf8').trim().split('\n');
        const finished = JSON.parse(lines.at(-1)!) as {
          type: string;
          health?: { verdict: string; reasons: unknown[] };
        };
        assert.equal(finished.type, 'run_finished');
        assert.deepEqual(finished.health, { verdict: 'healthy', reasons: [] }, JSON.stringify(finished));
        assert.doesNotMatch(told, /with problems/, told);
        assert.doesNotMatch(row.text, /with problems/, row.text);
        // None of the pre-flight's warnings about the wizard's own defaults reached the user.
        const aboutDefaults = notes.seen.filter((m) =>
          /workers|checkpoint\.every_steps|sink mode|frozen|random features|loss scal/i.test(m),
        );
        assert.deepEqual(aboutDefaults, [], JSON.stringify(notes.seen));
        // Nor did the run itself start with one: its warning events name no default the wizard chose.
        const codes = readFileSync(path.join(runDir, 'events.jsonl'), 'utf8')
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => JSON.parse(l) as { type: string; code?: string; data?: { code?: string } })
          .filter((e) => e.type === 'warning')
          .map((e) => e.code ?? e.data?.code ?? '?');
        t.diagnostic(`warning events: ${JSON.stringify(codes)}`);
        for (const c of ['workers_above_cores', 'no_checkpoint_interval', 'frozen_random_backbone', 'sink_unavailable'])
          assert.ok(!codes.includes(c), `the run warned ${c}: ${JSON.stringify(codes)}`);
      });

      await step('warnings-burst-one-notification', async () => {
        // A spec with the user's own choices that the run warns about as it starts: 16 loader threads
        // on this 2-core machine and sink mode on a CPU; the full wizard adds a frozen backbone
        // without weights. The three warnings arrive at once: one notification, the most serious
        // first, the others one click away (Show All).
        const specFile = path.join(workspace, 'warned.ascend.json');
        const spec = {
          name: BURST,
          data: { train: path.join(workspace, 'shapes'), image_size: 32, workers: 16 },
          sink: { enabled: true },
          device: { target: 'CPU' },
        };
        writeFileSync(specFile, JSON.stringify(spec, null, 2) + '\n');
        await startRunFromSpec(h, specFile, {
          target: 'This machine',
          dataDir: path.join(workspace, 'shapes'),
          backbone: 'resnet18',
          epochs: 1,
          batchSize: 16,
          name: BURST,
        });
        await notes.waitFor(new RegExp(`Started Ascend run "${BURST}"`), MEDIUM);
        const grouped = await notes.waitFor(new RegExp(`^Ascend run "${BURST}": .*\\(\\+\\d+ more\\)$`), LONG);
        await h.screenshot('burst');
        await waitForRunState(h, BURST, 'completed', LONG);
        await notes.waitFor(new RegExp(`Ascend run "${BURST}" completed`), MEDIUM);
        const codes = readFileSync(path.join(runDirOf(runsRoot, BURST)!, 'events.jsonl'), 'utf8')
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => JSON.parse(l) as { type: string; code?: string })
          .filter((e) => e.type === 'warning')
          .map((e) => e.code);
        t.diagnostic(`warning events: ${JSON.stringify(codes)}; notification: ${grouped}`);
        for (const c of ['frozen_random_backbone', 'workers_above_cores', 'sink_unavailable'])
          assert.ok(codes.includes(c), `the run did not warn ${c}: ${JSON.stringify(codes)}`);
        // The most serious first, and the count of the rest.
        assert.match(grouped, /\[frozen_random_backbone\]/);
        const more = Number(/\(\+(\d+) more\)$/.exec(grouped)?.[1]);
        assert.ok(more >= 2 && more <= codes.length - 1, `${grouped} for ${JSON.stringify(codes)}`);
        // One notification for the burst: no other toast names one of its warnings.
        const tags = ['[frozen_random_backbone]', '[workers_above_cores]', '[sink_unavailable]'];
        const aboutBurst = notes.seen.filter((m) => tags.some((tag) => m.includes(tag)));
        assert.deepEqual(aboutBurst, [grouped], JSON.stringify(notes.seen));
      });
    } finally {
      notes.stop();
      writeFileSync(path.join(outputDir, 'extension.log'), h.outputChannelLog(LOG_CHANNEL));
      writeFileSync(path.join(outputDir, 'notifications.json'), JSON.stringify(notes.seen, null, 2));
      await h.close();
      killLiveRuns(runsRoot);
      rmSync(tmp, { recursive: true, force: true });
    }
  },
);
