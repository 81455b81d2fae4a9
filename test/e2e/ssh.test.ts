// The same flow against an SSH target: a real OpenSSH server on 127.0.0.1 (throwaway keys, key login
// only) added through "Add SSH Target" from the ~/.ssh/config of the window's HOME; the extension
// deploys its runner there, checks the target, and starts, watches, shows and stops runs over ssh.
// Screenshots: test-output/e2e/ssh/NN-<step>.png.
// The window reaches the sshd through an alias in its HOME's ~/.ssh/config (sshWindow.ts).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { startSshd, type Sshd } from '../integration/sshd';
import { escapeRegExp, waitUntil } from './harness';
import { exitSshMasters, sshWindow } from './sshWindow';
import { killLiveRuns, startSuite, type Suite } from './steps';
import {
  answerInput,
  chooseRow,
  commandOnRun,
  eventSeqs,
  LOG_CHANNEL,
  LONG,
  MEDIUM,
  PYTHON,
  runDirOf,
  startRunFromSpec,
  streamEnds,
  terminalNames,
  terminalText,
  waitForDoctorRows,
  waitForRunState,
} from './ui';

const ALIAS = 'aft-loopback';

test(
  'the .vsix with an SSH target on a loopback sshd: add, check, start, console, stop',
  { timeout: 30 * 60_000 },
  async (t) => {
    const sshd: Sshd = await startSshd();
    const dest = sshd.destination;
    const tmp = mkdtempSync(path.join(tmpdir(), 'aft-e2e-ssh-side-'));
    const remoteRunsRoot = path.join(tmp, 'remote-runs');
    let s: Suite | undefined;
    try {
      s = await startSuite(t, {
        name: 'ssh',
        perClass: 30,
        ...sshWindow(tmp, dest, [{ alias: ALIAS }]),
        // Runs on the "remote" go to a temp folder (its home would be this machine's real one).
        settings: { 'ascendFinetune.remote.runsRoot': remoteRunsRoot },
      });
      const { h, notes } = s;
      const suite = s;
      const log = () => h.outputChannelLog(LOG_CHANNEL);

      await s.step(t, 'add-ssh-target-and-check', async () => {
        await h.openViewContainer('Ascend', 60_000);
        await h.runCommand('Ascend: Add SSH Target');
        await chooseRow(h, ALIAS); // listed from ~/.ssh/config
        await answerInput(h, 'Python with MindSpore on that host', PYTHON);
        await answerInput(h, 'Set-up line run first', '');
        // Adding it deploys the runner over ssh and checks the target.
        const { python, mindspore } = await waitForDoctorRows(h);
        assert.match(python, /^Python 3\.\d+/);
        assert.match(mindspore, /^MindSpore 2\.10\.0\b.*CPU/);
        assert.match(log(), new RegExp(`runner on ${ALIAS} \\(`));
        assert.match(log(), new RegExp(`doctor on ${ALIAS}: `));
      });

      const done = 'ssh-done';
      await s.step(t, 'ssh-run-completes', async () => {
        await startRunFromSpec(h, suite.specFile, {
          target: ALIAS,
          dataDir: suite.dataDir,
          backbone: 'resnet18',
          epochs: 2,
          batchSize: 8,
          name: done,
        });
        await notes.waitFor(new RegExp(`Started Ascend run "${done}" on ${ALIAS}`), MEDIUM);
        await waitForRunState(h, done, 'running', MEDIUM);
        await h.screenshot('ssh-run-running');
        await waitForRunState(h, done, 'completed', LONG, (r) => /epoch 2\/2/.test(r.text));
        await notes.waitFor(new RegExp(`Ascend run "${escapeRegExp(done)}" completed`), MEDIUM);
        const runDir = runDirOf(remoteRunsRoot, done);
        assert.ok(runDir, `no run folder for ${done} under ${remoteRunsRoot}`);
        const { seqs } = eventSeqs(runDir);
        let ends: ReturnType<typeof streamEnds> = [];
        await waitUntil(
          'the stream-end line',
          () => (ends = streamEnds(log(), path.basename(runDir))).length > 0,
          MEDIUM,
          log,
        );
        assert.deepEqual(ends.at(-1), { phase: 'finished completed', seq: seqs.length, events: seqs.length });
      });

      await s.step(t, 'ssh-open-console', async () => {
        const runId = path.basename(runDirOf(remoteRunsRoot, done)!);
        await commandOnRun(h, 'Ascend: Open Console', done);
        await waitUntil(
          `a terminal named "Ascend: ${done}"`,
          async () => (await terminalNames(h)).some((n) => n.includes(`Ascend: ${done}`)),
          MEDIUM,
          async () => JSON.stringify(await terminalNames(h)),
        );
        let text = '';
        await waitUntil(
          'the console to show the run output over ssh',
          async () => {
            text = (await terminalText(h)).replace(/\s+/g, '');
            return text.includes(`"exit_code":0`) && text.includes(runId);
          },
          MEDIUM,
          () => text,
        );
      });

      const stopped = 'ssh-stop';
      await s.step(t, 'ssh-stop-run', async () => {
        await startRunFromSpec(h, suite.specFile, {
          target: ALIAS,
          dataDir: suite.dataDir,
          backbone: 'resnet18',
          epochs: 200,
          batchSize: 8,
          name: stopped,
        });
        await waitForRunState(h, stopped, 'running', MEDIUM, (r) => /epoch \d+/.test(r.text));
        await commandOnRun(h, 'Ascend: Stop Run', stopped);
        await waitForRunState(h, stopped, 'stopped', LONG);
        await notes.waitFor(new RegExp(`Ascend run "${escapeRegExp(stopped)}" stopped`), MEDIUM);
        assert.ok(eventSeqs(runDirOf(remoteRunsRoot, stopped)!).finished, 'the stopped run has no run_finished event');
      });
    } finally {
      if (s) exitSshMasters(s.h.home, s.h.tempDir, [ALIAS]);
      await s?.close();
      killLiveRuns(remoteRunsRoot);
      await sshd.stop();
      rmSync(tmp, { recursive: true, force: true });
    }
  },
);
