// Issue 17, "the first hour", as a new user meets it: a fresh profile and no settings but one, a
// workspace with an image folder, and `ascendFinetune.pythonPath` pointing at a Python WITHOUT
// MindSpore (a throwaway `venv --without-pip`). "Start Ascend fine-tune" from the palette first says,
// in one sentence, that this Python cannot import MindSpore; Set Python Path… (the file dialog) takes
// the repo's .venv, checked with `doctor` before it is saved; then the short path: the workspace's
// image folder offered first with its counts, no weights, one summary (image size from the data, O0
// and no sink on this CPU), Launch, and the run completes without a warning about a default the
// wizard chose. Every interaction from the palette to the launch is counted (an accepted pick, a
// pressed button, a typed entry): the short path must take at most five.
// Screenshots: test-output/e2e/firstHour/NN-<step>.png.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { InteractionCounter, SHORT_PATH_BUDGET } from '../../src/core/wizard/interactions';
import { REPO_ROOT, SELECTORS, startHarness, waitUntil, type Harness } from './harness';
import { killLiveRuns } from './steps';
import { LOG_CHANNEL, LONG, makeImages, MEDIUM, NotificationRecorder, PYTHON, runDirOf, waitForRunState } from './ui';
import { buildVsix } from './vsix';

const RUN = 'shapes-resnet50'; // the default name: the data folder and the backbone

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

async function placeholder(h: Harness): Promise<string> {
  return (
    (await h.page
      .locator(SELECTORS.quickInputBox)
      .getAttribute('placeholder')
      .catch(() => null)) ?? ''
  );
}

/** Waits for a quick pick whose placeholder matches, and returns it. */
async function waitForPick(h: Harness, want: RegExp): Promise<string> {
  let now = '';
  await waitUntil(
    `a quick pick asking ${want}`,
    async () => want.test((now = await placeholder(h))) && (await h.page.locator(SELECTORS.quickInputBox).isVisible()),
    MEDIUM,
    () => `placeholder now: ${now}`,
  );
  return now;
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
    // 4 classes x 20 images of 32 px: 72 to train at the recipe's batch 32, so 2 steps per epoch.
    makeImages(path.join(workspace, 'shapes'), 20);
    writeFileSync(path.join(workspace, 'README.md'), '# my images\n');
    // A Python without MindSpore (nor numpy): what a new user's system python3 is.
    const bare = path.join(tmp, 'bare-venv');
    execFileSync('python3', ['-m', 'venv', '--without-pip', bare]);
    const barePython = path.join(bare, 'bin', 'python');
    assert.throws(() => execFileSync(barePython, ['-c', 'import numpy'], { stdio: 'pipe' }), 'the bare venv has numpy');

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
        // Set Python Path… is offered (the Targets view's MindSpore hint runs it too); the e2e types the path.
        // The health screen takes a typed path as well as Set Python Path… (the file dialog): code-server's
        // file dialog takes a typed path only after it has listed the folder, which made this step flaky.
        const box = h.page.locator(SELECTORS.quickInputBox);
        await box.fill(PYTHON);
        await choose(
          h,
          tee(repair),
          `Use ${PYTHON}`,
          new RegExp(`Use ${PYTHON.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} as this machine's Python`),
        );
        // Checked with doctor, saved, this machine checked again: the wizard goes on to the data.
        await waitForPick(h, /^Training data on This machine/);
        const log = h.outputChannelLog(LOG_CHANNEL);
        assert.match(log, /doctor with .*\.venv\/bin\/python: .*"ok": ?true/);
      });

      await step('short-path-to-launch', async () => {
        const offered = await rows(h);
        assert.match(offered[0] ?? '', /^shapes 4 classes · 80 images · about 32 px$/, JSON.stringify(offered));
        await choose(h, tee(short), 'data: the workspace image folder', /shapes/);
        await waitForPick(h, /^Pretrained weights for resnet50/);
        await choose(h, tee(short), 'weights: None', /None/);
        await waitForPick(h, /Pick a line to change it, or Launch/);
        const summary = await rows(h);
        await h.screenshot('summary');
        for (const want of [
          /^Launch on This machine/,
          /^Data: .*\/shapes 4 classes, 80 images$/,
          /^Image size: 32 px the images are about 32 px$/,
          /^Backbone: resnet50/,
          /^Weights: none/,
          /^Freeze: none every layer trains/,
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

      await step('run-completes-without-default-warnings', async () => {
        const row = await waitForRunState(h, RUN, 'completed', LONG, (r) => /epoch 10\/10/.test(r.text));
        t.diagnostic(`run row: ${row.text}`);
        await notes.waitFor(new RegExp(`Ascend run "${RUN}" completed`), MEDIUM);
        const runDir = runDirOf(runsRoot, RUN);
        assert.ok(runDir, `no run folder for ${RUN} under ${runsRoot}`);
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
