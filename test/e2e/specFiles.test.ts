// Run-spec files in the packed .vsix in a real VS Code (code-server): the language client starts the
// language server (dist/server.js) from the .vsix, and a *.ascend.yaml file gets its problems in the
// Problems panel (an unknown key with "did you mean", a value out of range, a data folder with one
// class folder), a quick fix (Ctrl+.) that renames the key, completion of a value (Ctrl+Space), a
// hover, and the code lenses: "Start fine-tune" runs a valid spec on this machine to completion and
// "Open last run" then appears above it.
// Screenshots: test-output/e2e/spec-files/NN-<step>.png. Needs `bash scripts/install-code-server.sh`.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { startSshd, type Sshd } from '../integration/sshd';
import { escapeRegExp, SELECTORS, waitUntil, type Harness } from './harness';
import { exitSshMasters, sshWindow } from './sshWindow';
import { killLiveRuns, startSuite, type Suite } from './steps';
import { chooseRow, LONG, MEDIUM, PYTHON, runDirOf, waitForRunState } from './ui';

const BROKEN = 'broken.ascend.yaml';
// 1-based lines and columns of the spots the steps put the cursor on.
const BROKEN_TEXT = `# problems on purpose
name: broken
data:
  train: oneclass
  image_size: 32
  val_split: 1.5
model:
  backbone: resnet18
train:
  epocs: 1
device:
  target: CPU
`;
const AT = { valSplitKey: [6, 4], backboneValue: [8, 13], typo: [10, 4] } as const;

const RUN = 'e2e-spec';
const VALID = 'tiny.ascend.yaml';
const VALID_TEXT = `# a valid spec: 1 epoch of resnet18 on the workspace's shapes
name: ${RUN}
data:
  train: shapes
  image_size: 32
  val_split: 0.2
  batch_size: 8
model:
  backbone: resnet18
train:
  epochs: 1
amp:
  level: O0
device:
  target: CPU
`;

// A second valid spec, started on an SSH target (a loopback sshd) with "Start on target…".
const ALIAS = 'aft-loopback';
const REMOTE_RUN = 'e2e-spec-ssh';
const REMOTE = 'remote.ascend.yaml';
const REMOTE_TEXT = VALID_TEXT.replace(`name: ${RUN}`, `name: ${REMOTE_RUN}`);
const AT_REMOTE_TRAIN = [4, 10] as const;

// ---------------------------------------------------------------- editor helpers (this file's own)

/** Opens a workspace file through Go to File and waits for its editor to be the active one. */
async function openFile(h: Harness, name: string): Promise<void> {
  await h.runCommand('Go to File...');
  const box = h.page.locator(SELECTORS.quickInputBox);
  await box.fill(name);
  const row = h.page
    .locator(SELECTORS.quickInputRow)
    .filter({ has: h.page.locator('.label-name', { hasText: new RegExp(`^\\s*${escapeRegExp(name)}\\s*$`) }) })
    .first();
  await row.waitFor({ state: 'visible', timeout: MEDIUM });
  await row.click();
  await h.page.locator('.tab.active', { hasText: name }).waitFor({ state: 'visible', timeout: MEDIUM });
}

/** Puts the cursor of the active editor at a 1-based line and column (Go to Line/Column). */
async function goTo(h: Harness, line: number, col: number): Promise<void> {
  await h.runCommand('Go to Line/Column...');
  const box = h.page.locator(SELECTORS.quickInputBox);
  await box.fill(`:${line}:${col}`);
  await box.press('Enter');
  await box.waitFor({ state: 'hidden', timeout: MEDIUM });
  // The status bar's cursor position says the cursor got there.
  await h.page
    .locator(`${SELECTORS.statusBar} .statusbar-item`, { hasText: new RegExp(`^\\s*Ln ${line}, Col ${col}\\b`) })
    .first()
    .waitFor({ state: 'visible', timeout: MEDIUM });
}

/** The rows of the Problems panel (its tree: a file row, then one row per problem), as text. */
async function problemRows(h: Harness): Promise<string[]> {
  return h.page
    .locator('.markers-panel .monaco-list-row')
    .evaluateAll((els) => els.map((el) => (el.getAttribute('aria-label') ?? el.textContent ?? '').trim()))
    .catch(() => []);
}

/** Waits until the Problems panel's rows satisfy `ok`; returns them. */
async function waitForProblems(h: Harness, what: string, ok: (rows: string[]) => boolean): Promise<string[]> {
  let rows: string[] = [];
  await waitUntil(
    `the Problems panel to show ${what}`,
    async () => ok((rows = await problemRows(h))),
    MEDIUM,
    () => JSON.stringify(rows, null, 1),
    250,
  );
  return rows;
}

/** The labels of the suggest widget's rows while it is open. */
async function suggestions(h: Harness): Promise<string[]> {
  return h.page
    .locator('.suggest-widget.visible .monaco-list-row .label-name')
    .allTextContents()
    .then((l) => l.map((x) => x.trim()))
    .catch(() => []);
}

/** A line of the active editor by its text (spaces render as no-break spaces, which `\\s` matches). */
function editorLine(h: Harness, text: RegExp) {
  return h.page.locator('.editor-group-container.active .view-lines .view-line').filter({ hasText: text }).first();
}

/** A code lens above the active editor's text, by the start of its title. */
function codeLens(h: Harness, title: string) {
  return h.page.locator('.editor-group-container.active .codelens-decoration a', { hasText: title }).first();
}

// ---------------------------------------------------------------- the test

test(
  'run-spec files in the .vsix: problems, quick fix, completion, hover, code lenses, SSH target',
  { timeout: 15 * 60_000 },
  async (t) => {
    // The SSH target as ssh.test.ts sets it up (sshWindow.ts); here it is listed from ~/.ssh/config
    // (readSshConfig), with its Python and runs folder from the remote.* settings.
    const sshd: Sshd = await startSshd();
    const dest = sshd.destination;
    const side = mkdtempSync(path.join(tmpdir(), 'aft-e2e-spec-side-'));
    const remoteRunsRoot = path.join(side, 'remote-runs');
    let s: Suite | undefined;
    try {
      // 10 images per class, 20% held out: 32 to train on, 4 steps per epoch at batch 8.
      s = await startSuite(t, {
        name: 'spec-files',
        perClass: 10,
        ...sshWindow(side, dest, [{ alias: ALIAS }]),
        settings: { 'ascendFinetune.remote.python': PYTHON, 'ascendFinetune.remote.runsRoot': remoteRunsRoot },
      });
      const { h, notes } = s;
      const suite = s;
      // A data folder with one class folder, and the spec files, written as a user would have them.
      mkdirSync(path.join(s.workspace, 'oneclass', 'circle'), { recursive: true });
      const broken = path.join(s.workspace, BROKEN);
      writeFileSync(broken, BROKEN_TEXT);
      writeFileSync(path.join(s.workspace, VALID), VALID_TEXT);
      writeFileSync(path.join(s.workspace, REMOTE), REMOTE_TEXT);

      await s.step(t, 'problems-of-a-broken-spec', async () => {
        await openFile(h, BROKEN);
        await h.runCommand('View: Focus Problems (Errors, Warnings, Infos)');
        const rows = await waitForProblems(
          h,
          "the broken spec's three problems",
          (r) =>
            r.some((x) => /did you mean/.test(x)) &&
            r.some((x) => /val_split/.test(x)) &&
            r.some((x) => /class folder/.test(x)),
        );
        assert.ok(
          rows.some((x) => /train\.epocs: unknown field \(did you mean "epochs"\?\)/.test(x)),
          'the typo',
        );
        assert.ok(
          rows.some((x) => /data\.val_split: must be .*0\.9.*got 1\.5/.test(x)),
          'the range',
        );
        assert.ok(
          rows.some((x) => /data\.train has 1 class folder \(circle\)/.test(x)),
          'the class folder',
        );
      });

      await s.step(t, 'quick-fix-renames-the-key', async () => {
        await goTo(h, ...AT.typo);
        await h.page.keyboard.press('Control+.');
        // The widget's pointer block swallows clicks: move its focus to the fix and press Enter.
        const fix = h.page
          .locator('.action-widget .monaco-list-row.action[aria-label="Rename to \\"epochs\\""]')
          .first();
        await fix.waitFor({ state: 'visible', timeout: MEDIUM });
        for (let i = 0; i < 5 && !(await fix.evaluate((el) => el.classList.contains('focused'))); i++)
          await h.page.keyboard.press('ArrowDown');
        await h.page.keyboard.press('Enter');
        await editorLine(h, /^\s*epochs:\s1$/).waitFor({ state: 'visible', timeout: MEDIUM });
        await h.page.keyboard.press('Control+S');
        await waitUntil(
          'the fix to be saved',
          () => /^ {2}epochs: 1$/m.test(readFileSync(broken, 'utf8')),
          MEDIUM,
          () => readFileSync(broken, 'utf8'),
        );
        assert.doesNotMatch(readFileSync(broken, 'utf8'), /epocs/);
        // The problem is gone, the others stay.
        await waitForProblems(
          h,
          'no "did you mean" but the other two',
          (r) =>
            !r.some((x) => /did you mean/.test(x)) &&
            r.some((x) => /val_split/.test(x)) &&
            r.some((x) => /class folder/.test(x)),
        );
      });

      await s.step(t, 'completion-of-a-value', async () => {
        await goTo(h, ...AT.backboneValue);
        await h.page.keyboard.press('Control+Space');
        let labels: string[] = [];
        await waitUntil(
          'the suggest widget to list the backbones',
          async () => {
            labels = await suggestions(h);
            return ['resnet18', 'resnet34', 'resnet50', 'resnet101'].every((b) => labels.includes(b));
          },
          MEDIUM,
          () => JSON.stringify(labels),
        );
        await h.screenshot('backbones-suggested');
        await h.page.keyboard.press('Escape');
      });

      await s.step(t, 'hover-on-a-key', async () => {
        await goTo(h, ...AT.valSplitKey);
        await h.runCommand('Show or Focus Hover');
        const hover = h.page.locator('.monaco-hover-content', { hasText: 'data.val_split' }).first();
        await hover.waitFor({ state: 'visible', timeout: MEDIUM });
        const text = (await hover.textContent()) ?? '';
        assert.match(text, /default 0\.1/);
        assert.match(text, /held out for validation/);
        await h.screenshot('val-split-hover');
        await h.page.keyboard.press('Escape');
      });

      await s.step(t, 'start-fine-tune-lens-runs-it', async () => {
        await openFile(h, VALID);
        const start = codeLens(h, 'Start fine-tune');
        await start.waitFor({ state: 'visible', timeout: MEDIUM });
        // No "Open last run" before any run of this spec.
        assert.equal(await codeLens(h, 'Open last run').count(), 0);
        await start.click();
        await notes.waitFor(new RegExp(`Started "${RUN}" on This machine`), MEDIUM);
        await h.openViewContainer('Ascend', 60_000);
        await waitForRunState(h, RUN, 'completed', LONG, (r) => /epoch 1\/1/.test(r.text));
        const runDir = runDirOf(suite.runsRoot, RUN);
        assert.ok(runDir, `no run folder for ${RUN}`);
        const spec = JSON.parse(readFileSync(path.join(runDir, 'spec.json'), 'utf8')) as {
          data: { train: string };
          model: { backbone: string };
        };
        // The relative data path was made absolute against the spec file's folder.
        assert.equal(spec.data.train, suite.dataDir);
        assert.equal(spec.model.backbone, 'resnet18');
      });

      await s.step(t, 'open-last-run-lens', async () => {
        const runId = path.basename(runDirOf(suite.runsRoot, RUN)!);
        const last = codeLens(h, 'Open last run');
        await waitUntil(
          'the "Open last run" lens to name the completed run',
          async () => ((await last.textContent().catch(() => '')) ?? '').includes(`completed, ${runId}`),
          MEDIUM,
          async () => (await h.page.locator('.codelens-decoration').allTextContents()).join(' | '),
        );
        await last.click();
        await h.page
          .locator('.tab.active', { hasText: `Dashboard: ${RUN}` })
          .waitFor({ state: 'visible', timeout: MEDIUM });
      });

      await s.step(t, 'start-on-ssh-target', async () => {
        await openFile(h, REMOTE);
        const onTarget = codeLens(h, 'Start on target');
        await onTarget.waitFor({ state: 'visible', timeout: MEDIUM });
        await onTarget.click();
        await chooseRow(h, ALIAS);
        await notes.waitFor(new RegExp(`Started "${REMOTE_RUN}" on ${ALIAS}`), MEDIUM);
        // The file is for that target from now on: its lens says so.
        await codeLens(h, `Start fine-tune on ${ALIAS}`).waitFor({ state: 'visible', timeout: MEDIUM });
        await waitForRunState(h, REMOTE_RUN, 'completed', LONG, (r) => /epoch 1\/1/.test(r.text));
        assert.ok(runDirOf(remoteRunsRoot, REMOTE_RUN), `no run folder for ${REMOTE_RUN} under the target's runs root`);
      });

      await s.step(t, 'paths-checked-on-the-ssh-target', async () => {
        // data.train → the one-class folder: the class folders are counted there, through the runner's probe.
        await goTo(h, ...AT_REMOTE_TRAIN);
        await h.page.keyboard.press('Shift+End');
        await h.page.keyboard.type('oneclass');
        await h.page.keyboard.press('Escape');
        await h.runCommand('View: Focus Problems (Errors, Warnings, Infos)');
        await waitForProblems(h, `the class folder counted on ${ALIAS}`, (r) =>
          r.some((x) => new RegExp(`data\\.train has 1 class folder on ${ALIAS} \\(circle\\)`).test(x)),
        );
      });
    } finally {
      if (s) exitSshMasters(s.h.home, s.h.tempDir, [ALIAS]);
      await s?.close();
      killLiveRuns(remoteRunsRoot);
      await sshd.stop();
      rmSync(side, { recursive: true, force: true });
    }
  },
);
