// The packed .vsix in a real VS Code (code-server), on "This machine", through the UI only: the Ascend
// view container and Check Target; a run started from the palette through the wizard that completes
// with a notification; its console in a terminal; a second run stopped with Stop Run; a third one
// that keeps streaming across a window reload to its end, with no gap in seq.
// Screenshots: test-output/e2e/local/NN-<step>.png. Needs `bash scripts/install-code-server.sh`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { escapeRegExp, waitUntil } from './harness';
import { startSuite, type Suite } from './steps';
import {
  commandOnRun,
  commandOnTarget,
  eventSeqs,
  LOG_CHANNEL,
  LONG,
  MEDIUM,
  runDirOf,
  runRow,
  startRunFromSpec,
  streamEnds,
  targetRows,
  terminalNames,
  terminalText,
  waitForDoctorRows,
  waitForRunState,
} from './ui';

const TARGET = 'This machine';

test('the .vsix on this machine: check, start, console, stop, reload mid-run', { timeout: 30 * 60_000 }, async (t) => {
  // 30 images per class: about 14 steps per epoch at batch 8.
  const s: Suite = await startSuite(t, { name: 'local', perClass: 30 });
  const { h, notes } = s;
  const log = () => h.outputChannelLog(LOG_CHANNEL);
  try {
    await s.step(t, 'ascend-container-and-check-target', async () => {
      await h.openViewContainer('Ascend', 60_000);
      await waitUntil(
        '"This machine" in the Targets view',
        async () => (await targetRows(h)).some((r) => r.startsWith(TARGET)),
        MEDIUM,
      );
      await commandOnTarget(h, 'Ascend: Check Target', TARGET);
      const { python, mindspore } = await waitForDoctorRows(h);
      assert.match(python, /^Python 3\.\d+/);
      assert.match(mindspore, /^MindSpore 2\.10\.0\b.*CPU/);
    });

    const done = 'e2e-done';
    await s.step(t, 'wizard-run-completes', async () => {
      await startRunFromSpec(h, s.specFile, {
        target: TARGET,
        dataDir: s.dataDir,
        backbone: 'resnet18',
        epochs: 2,
        batchSize: 8,
        name: done,
      });
      await notes.waitFor(new RegExp(`Started Ascend run "${done}" on ${TARGET}`), MEDIUM);
      await waitForRunState(h, done, 'running', MEDIUM);
      await h.screenshot('run-running');
      const row = await waitForRunState(h, done, 'completed', LONG, (r) => /epoch 2\/2/.test(r.text));
      assert.match(row.text, /best \d+(\.\d)?%/);
      await notes.waitFor(new RegExp(`Ascend run "${escapeRegExp(done)}" completed`), MEDIUM);
    });

    await s.step(t, 'open-console', async () => {
      const runDir = runDirOf(s.runsRoot, done);
      assert.ok(runDir, `no run folder for ${done} under ${s.runsRoot}`);
      const runId = runDir.split('/').pop()!;
      await commandOnRun(h, 'Ascend: Open Console', done);
      await waitUntil(
        `a terminal named "Ascend: ${done}"`,
        async () => (await terminalNames(h)).some((n) => n.includes(`Ascend: ${done}`)),
        MEDIUM,
        async () => JSON.stringify(await terminalNames(h)),
      );
      // console.log's last line is the runner's exit record, with the run folder.
      let text = '';
      await waitUntil(
        'the console to show the run output',
        async () => {
          text = (await terminalText(h)).replace(/\s+/g, '');
          return text.includes(`"exit_code":0`) && text.includes(runId);
        },
        MEDIUM,
        () => text,
      );
      assert.match(log(), /node-pty loaded from .*lib\/vscode\/node_modules/);
    });

    const stopped = 'e2e-stop';
    await s.step(t, 'stop-run', async () => {
      await startRunFromSpec(h, s.specFile, {
        target: TARGET,
        dataDir: s.dataDir,
        backbone: 'resnet18',
        epochs: 200,
        batchSize: 8,
        name: stopped,
      });
      await waitForRunState(h, stopped, 'running', MEDIUM, (r) => /epoch \d+/.test(r.text));
      await commandOnRun(h, 'Ascend: Stop Run', stopped);
      await waitForRunState(h, stopped, 'stopped', LONG);
      await notes.waitFor(new RegExp(`Ascend run "${escapeRegExp(stopped)}" stopped`), MEDIUM);
      const runDir = runDirOf(s.runsRoot, stopped)!;
      const { seqs, finished } = eventSeqs(runDir);
      assert.ok(finished, 'the stopped run has no run_finished event');
      assert.ok(seqs.length < 200 * 14, 'the run went on to the end');
    });

    const reloaded = 'e2e-reload';
    await s.step(t, 'reload-mid-run', async () => {
      await startRunFromSpec(h, s.specFile, {
        target: TARGET,
        dataDir: s.dataDir,
        backbone: 'resnet18',
        epochs: 40,
        batchSize: 8,
        name: reloaded,
      });
      await waitForRunState(h, reloaded, 'running', MEDIUM, (r) => /epoch \d+/.test(r.text));
      const runDir = runDirOf(s.runsRoot, reloaded)!;
      const runId = runDir.split('/').pop()!;
      const before = eventSeqs(runDir);
      assert.ok(!before.finished, 'the run finished before the reload');
      await h.screenshot('before-reload');

      await h.reloadWindow(MEDIUM);
      await h.openViewContainer('Ascend', 60_000);
      // Found again: the new extension host lists the run and streams it (the Runs view alone could
      // show the index's last state from before the reload).
      const streams = () => (log().match(new RegExp(`streaming local/${escapeRegExp(runId)} `, 'g')) ?? []).length;
      await waitUntil(`a second stream of ${runId} after the reload`, () => streams() >= 2, MEDIUM, log);
      await waitForRunState(h, reloaded, 'running', MEDIUM, (r) => /epoch \d+/.test(r.text));
      const mid = eventSeqs(runDir);
      assert.ok(!mid.finished, 'the run finished before the extension found it again: make it longer');
      await h.screenshot('after-reload-running');

      await waitForRunState(h, reloaded, 'completed', LONG, (r) => /epoch 40\/40/.test(r.text));
      await notes.waitFor(new RegExp(`Ascend run "${escapeRegExp(reloaded)}" completed`), MEDIUM);
      // No gap: the new stream delivered every event of the run exactly once, 1..N.
      const after = eventSeqs(runDir);
      assert.deepEqual(
        after.seqs,
        Array.from({ length: after.seqs.length }, (_, i) => i + 1),
        'events.jsonl itself has a gap',
      );
      let ends: ReturnType<typeof streamEnds> = [];
      await waitUntil(
        'the stream-end line in the extension log',
        () => (ends = streamEnds(log(), runId)).some((e) => e.phase === 'finished completed'),
        MEDIUM,
        log,
      );
      const last = ends.find((e) => e.phase === 'finished completed')!;
      assert.equal(last.seq, after.seqs.length, 'the stream ended before the last event');
      assert.equal(last.events, after.seqs.length, 'events were skipped or doubled');
      assert.doesNotMatch(log(), new RegExp(`run local/${escapeRegExp(runId)}: events jumped`));
    });

    const row = await runRow(h, done);
    t.diagnostic(`runs view after all steps: ${row?.text}`);
  } finally {
    await s.close();
  }
});
