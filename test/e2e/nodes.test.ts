// A multi-node run started through the Start wizard (issue 8): two SSH targets that are this host
// under two names, `aft-node-a` (HostName 127.0.0.1, the master) and `aft-node-b` (HostName
// localhost), both on the loopback sshd. At step 10 the wizard offers aft-node-b as another machine;
// ticking it makes the extension write, validate and launch the spec on both, and msrun trains their
// ranks as one real run (test/integration/multiNode.test.ts does the same without the UI).
// Screenshots: test-output/e2e/nodes/NN-<step>.png.
//
// Both nodes are one host, so they would share `ascendFinetune.remote.runsRoot` and make the same
// run folder (one run id) twice: aft-node-b gets its own runs root through an
// `ascendFinetune.sshTargets` entry, which also keeps its ~/.ssh/config alias (the HostName,
// "localhost", stays its node address). ssh reads ~/.ssh/config from the passwd home, so the `ssh`
// wrapper on the window's PATH points it at the window's HOME, as in ssh.test.ts.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { startSshd, type Sshd } from '../integration/sshd';
import { escapeRegExp, SELECTORS, waitUntil, type Harness } from './harness';
import { killLiveRuns, startSuite, type Suite } from './steps';
import { exitSshMasters, sshWindow } from './sshWindow';
import {
  answerDialog,
  chooseRow,
  commandOnRun,
  LOG_CHANNEL,
  LONG,
  MEDIUM,
  openInDialog,
  PYTHON,
  runDirOf,
  targetRows,
  typeAndEnter,
  useDataFolder,
  waitForRunState,
  waitForStep,
} from './ui';

const NODE_A = 'aft-node-a';
const NODE_B = 'aft-node-b';
const BATCH = 8;
const EPOCHS = 2;
const RUN = 'two-nodes';

test(
  'the .vsix starts a run on two SSH targets from the Start wizard: one run id, both nodes train every step',
  { timeout: 30 * 60_000 },
  async (t) => {
    const sshd: Sshd = await startSshd();
    const dest = sshd.destination;
    const tmp = mkdtempSync(path.join(tmpdir(), 'aft-e2e-nodes-side-'));
    const runsA = path.join(tmp, 'runs-a');
    const runsB = path.join(tmp, 'runs-b');
    let s: Suite | undefined;
    try {
      s = await startSuite(t, {
        name: 'nodes',
        perClass: 16,
        ...sshWindow(tmp, dest, [
          { alias: NODE_A, hostName: '127.0.0.1' },
          { alias: NODE_B, hostName: 'localhost' },
        ]),
        settings: {
          'ascendFinetune.remote.python': PYTHON,
          'ascendFinetune.remote.runsRoot': runsA,
          'ascendFinetune.sshTargets': [{ host: NODE_B, runsRoot: runsB }],
        },
      });
      const { h, notes } = s;
      const suite = s;
      const log = () => h.outputChannelLog(LOG_CHANNEL);

      await s.step(t, 'both-targets-listed', async () => {
        await h.openViewContainer('Ascend', 60_000);
        let rows: string[] = [];
        await waitUntil(
          'both nodes in the Targets view',
          async () => {
            rows = await targetRows(h);
            return (
              rows.includes(`${NODE_A} ~/.ssh/config → 127.0.0.1`) && rows.includes(`${NODE_B} settings, ~/.ssh/config`)
            );
          },
          MEDIUM,
          () => JSON.stringify(rows),
        );
      });

      await s.step(t, 'wizard-to-the-machines-step', async () => {
        await h.runCommand('Ascend: Start Ascend Fine-Tune from Spec File');
        await openInDialog(h, suite.specFile);
        await walkToStep9(h, NODE_A, suite.dataDir);
        await typeAndEnter(h, '0.01');
        // Step 10: no NPU list on CPU, so the machines pick comes straight away.
        await waitForMachinesPick(h);
        assert.deepEqual(
          await pickRows(h),
          [`${NODE_B} localhost`],
          'the other SSH target, by its node address; not the master, not this machine',
        );
      });

      await s.step(t, 'machines-back-to-step-9', async () => {
        await h.page.locator(`${SELECTORS.quickInput} .codicon-quick-input-back`).first().click();
        await waitForStep(h, 9);
        assert.equal(await h.page.locator(SELECTORS.quickInputBox).inputValue(), '0.01', 'step 9 keeps its answer');
        await typeAndEnter(h, '0.01');
        await waitForMachinesPick(h);
      });

      await s.step(t, 'tick-node-b-and-launch', async () => {
        const rowB = h.page.locator(SELECTORS.quickInputRow).filter({ hasText: NODE_B }).first();
        await rowB.locator('input.quick-input-list-checkbox').check();
        await waitUntil(
          `${NODE_B} to be ticked`,
          () => rowB.locator('input.quick-input-list-checkbox').isChecked(),
          MEDIUM,
        );
        await h.screenshot('node-b-ticked');
        await h.page.locator(SELECTORS.quickInputBox).press('Enter');
        await waitForStep(h, 11);
        await chooseRow(h, /Continue/); // training options as they are
        await waitForStep(h, 12);
        await typeAndEnter(h, RUN);
        await waitForStep(h, 13);
        await chooseRow(h, `Launch on ${NODE_A}`);
        await notes.waitFor(new RegExp(`Started Ascend run "${RUN}" on ${NODE_A}`), LONG);
        // The log names every node the launch started, with one master port.
        const launched = [
          ...log().matchAll(/launched (\S+) node (\d) \(pid \d+\) in (\S+) on (\S+), master port (\d+)/g),
        ].map((m) => ({ runId: m[1], rank: m[2], dir: m[3], on: m[4], port: m[5] }));
        assert.deepEqual(
          launched.map((l) => [l.rank, l.on, path.dirname(l.dir)]),
          [
            ['0', NODE_A, runsA],
            ['1', NODE_B, runsB],
          ],
          log(),
        );
        assert.equal(launched[1].runId, launched[0].runId, 'node 1 takes the master run id');
        assert.equal(launched[1].port, launched[0].port);
      });

      let dirs: string[] = [];
      await s.step(t, 'two-node-run-completes', async () => {
        await waitForRunState(h, RUN, 'completed', LONG, (r) => new RegExp(`epoch ${EPOCHS}/${EPOCHS}`).test(r.text));
        await notes.waitFor(new RegExp(`Ascend run "${escapeRegExp(RUN)}" completed`), MEDIUM);
        const a = runDirOf(runsA, RUN);
        const b = runDirOf(runsB, RUN);
        assert.ok(a && b, `run folders: ${a} under ${runsA}, ${b} under ${runsB}`);
        assert.equal(path.basename(b), path.basename(a), 'one run id on both nodes');

        // The Runs view follows rank 0's events; each node's launcher writes its status.json when its
        // msrun has ended, a little later.
        const ended = (dir: string) => !['starting', 'running'].includes(status(dir).state);
        await waitUntil(
          "both nodes' status.json to leave running",
          () => ended(a) && ended(b),
          MEDIUM,
          () => JSON.stringify([status(a), status(b)]),
        );

        const events = readFileSync(path.join(a, 'events.jsonl'), 'utf8')
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => JSON.parse(l) as Record<string, unknown>);
        const started = events.find((e) => e.type === 'run_started') as
          { global_batch: number; total_steps: number } | undefined;
        assert.ok(started, 'no run_started on the master');
        assert.equal(started.global_batch, 2 * BATCH, `batch ${BATCH} per device, 1 device, 2 nodes`);
        const steps = events.filter((e) => e.type === 'step').map((e) => e.step);
        assert.deepEqual(
          steps,
          Array.from({ length: started.total_steps }, (_, i) => i + 1),
        );
        assert.deepEqual([status(a).state, status(a).exit_code], ['completed', 0]);

        // Node 1 ran global rank 1 of the same cluster: it trained to the master's last step.
        assert.deepEqual([status(b).state, status(b).exit_code], ['completed', 0]);
        const verdict = JSON.parse(readFileSync(path.join(b, 'ranks', 'rank-1.json'), 'utf8')) as {
          status: string;
          step: number;
        };
        assert.deepEqual([verdict.status, verdict.step], ['completed', started.total_steps]);
        dirs = [a, b];
      });

      await s.step(t, 'delete-removes-every-node', async () => {
        await commandOnRun(h, 'Ascend: Delete Run', RUN);
        const asked = await answerDialog(h, new RegExp(`Delete run "${escapeRegExp(RUN)}"`), 'Delete');
        for (const [dir, alias] of [
          [dirs[0], NODE_A],
          [dirs[1], NODE_B],
        ])
          assert.ok(asked.includes(`${dir} on ${alias}`), `the question names ${dir} on ${alias}: ${asked}`);
        await waitUntil(
          "both nodes' run folders to be deleted",
          () => dirs.every((d) => !existsSync(d)),
          MEDIUM,
          () => JSON.stringify(dirs.filter((d) => existsSync(d))),
        );
      });
    } finally {
      if (s) exitSshMasters(s.h.home, s.h.tempDir, [NODE_A, NODE_B]);
      await s?.close();
      killLiveRuns(runsA);
      killLiveRuns(runsB);
      killProcessesNaming(tmp);
      await sshd.stop();
      rmSync(tmp, { recursive: true, force: true });
    }
  },
);

function status(runDir: string): { state: string; exit_code: number | null } {
  return JSON.parse(readFileSync(path.join(runDir, 'status.json'), 'utf8')) as {
    state: string;
    exit_code: number | null;
  };
}

/**
 * After a failed step: every process whose command line names this test's temp folder (msrun, its
 * ranks, the node 1 launcher, and the runner's `attach` the extension started over ssh, which
 * outlives its connection and, once the run folder is removed, would poll for it forever).
 */
function killProcessesNaming(dir: string): void {
  for (const pid of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      if (Number(pid) !== process.pid && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir))
        process.kill(Number(pid), 'SIGKILL');
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
}

// ---------------------------------------------------------------- the wizard, step by step
// ui.ts's startRunFromSpec walks the wizard in one go (skipping step 10); this stops at step 10.

/** Steps 1-8 as ui.ts's startRunFromSpec answers them (resnet18, no weights, frozen backbone, O0, 2 epochs, batch 8), then step 9 shown. */
async function walkToStep9(h: Harness, target: string, dataDir: string): Promise<void> {
  await waitForStep(h, 1);
  await chooseRow(h, target);
  await waitForStep(h, 2);
  await useDataFolder(h, dataDir);
  await waitForStep(h, 3);
  await chooseRow(h, 'resnet18');
  await waitForStep(h, 4);
  await chooseRow(h, 'None');
  await waitForStep(h, 5);
  await chooseRow(h, 'backbone');
  await waitForStep(h, 6);
  await chooseRow(h, 'O0');
  await waitForStep(h, 7);
  await typeAndEnter(h, String(EPOCHS));
  await waitForStep(h, 8);
  await typeAndEnter(h, String(BATCH));
  await waitForStep(h, 9);
}

/** Step 10's "Other machines to train with <master>" pick, shown. */
async function waitForMachinesPick(h: Harness): Promise<void> {
  await waitForStep(h, 10);
  const box = h.page.locator(SELECTORS.quickInputBox);
  await waitUntil(
    'the machines pick',
    async () =>
      ((await box.getAttribute('placeholder').catch(() => '')) ?? '').startsWith(
        `Other machines to train with ${NODE_A} (the master, 127.0.0.1)`,
      ),
    MEDIUM,
    async () => `placeholder: ${await box.getAttribute('placeholder').catch(() => '?')}`,
  );
}

/** The rows of the pick shown now, as "label description". */
async function pickRows(h: Harness): Promise<string[]> {
  return h.page.locator(SELECTORS.quickInputRow).evaluateAll((els) =>
    els.map((el) =>
      ['.label-name', '.label-description']
        .map((sel) => el.querySelector(sel)?.textContent?.trim() ?? '')
        .filter(Boolean)
        .join(' '),
    ),
  );
}
