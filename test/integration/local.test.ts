// A real run on this machine through the core: launch, then follow to run_finished, once cleanly
// and once with the attach process killed three times mid-stream.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { launchRun } from '../../src/core/targets/runnerCli';
import { localTarget } from '../../src/core/targets/target';
import {
  assertNoAttachLeft,
  followCleanAndKilled,
  makeData,
  PYTHON,
  requirePython,
  RUNNER_DIR,
  runStarted,
  waitForExit,
  writeSpec,
} from './realRun';

let tmp: string;
before(() => {
  requirePython();
  tmp = mkdtempSync(path.join(tmpdir(), 'aft-it-local-'));
});
after(() => rmSync(tmp, { recursive: true, force: true }));

test(
  'a real run, followed locally: every seq once and in order, also across killed attaches',
  { timeout: 180_000 },
  async (t) => {
    const target = localTarget({ python: PYTHON, runnerDir: RUNNER_DIR });
    const train = await makeData(target, path.join(tmp, 'data'));
    const spec = path.join(tmp, 'spec.json');
    writeSpec(spec, train);

    const run = await launchRun(target, spec, path.join(tmp, 'runs'));
    try {
      const clean = await followCleanAndKilled(target, run.run_dir, (m) => t.diagnostic(m));
      assert.equal(runStarted(clean.events).spec.name, 'it');
    } finally {
      await waitForExit(run.pid);
    }
    await assertNoAttachLeft(run.run_dir);
  },
);
