// A real run on this machine through the core: launch, then follow to run_finished, once cleanly
// and once with the attach process killed three times mid-stream.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { launchRun } from '../../src/core/runnerCli';
import { localTarget } from '../../src/core/target';
import { assertComplete, assertNoAttachLeft, follow, makeData, PYTHON, requirePython, RUNNER_DIR, runStarted, waitForExit, writeSpec } from './realRun';

let tmp: string;
before(() => {
  requirePython();
  tmp = mkdtempSync(path.join(tmpdir(), 'aft-it-local-'));
});
after(() => rmSync(tmp, { recursive: true, force: true }));

test('a real run, followed locally: every seq once and in order, also across killed attaches', { timeout: 180_000 }, async (t) => {
  const target = localTarget({ python: PYTHON, runnerDir: RUNNER_DIR });
  const train = await makeData(target, path.join(tmp, 'data'));
  const spec = path.join(tmp, 'spec.json');
  writeSpec(spec, train);

  const run = await launchRun(target, spec, path.join(tmp, 'runs'));
  try {
    const [clean, killed] = await Promise.all([follow(target, run.run_dir), follow(target, run.run_dir, { every: 2, times: 3 })]);
    assertComplete(clean, run.run_dir);
    assert.deepEqual(clean.reconnects, []);
    assertComplete(killed, run.run_dir);
    assert.equal(killed.kills, 3);
    assert.equal(killed.reconnects.length, 3, 'one reconnect per kill');
    t.diagnostic(`${killed.events.length} events; reconnected after seq ${killed.reconnects.map((r) => r.since).join(", ")}`);
    assert.equal(runStarted(clean.events).spec.name, 'it');
  } finally {
    await waitForExit(run.pid);
  }
  await assertNoAttachLeft(run.run_dir);
});
