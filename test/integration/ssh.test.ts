// A real run over a real OpenSSH server on 127.0.0.1: paths full of shell syntax must reach the
// runner unchanged and run nothing, and a killed ssh client must cost no event and double none.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { launchRun } from '../../src/core/targets/runnerCli';
import { sshTarget, type SshTarget } from '../../src/core/targets/target';
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
import { startSshd, type Sshd } from './sshd';

let tmp: string;
let sshd: Sshd;
let target: SshTarget;
const tag = Math.random().toString(36).slice(2, 8);
const markers = [1, 2, 3].map((i) => `aft-marker-${tag}-${i}`);
// Every kind of text a remote shell would act on, if it were ever unquoted or quoted twice.
const nasty = `my data it's "quoted" $(touch ${markers[0]}) \`touch ${markers[1]}\`; touch ${markers[2]}; ünïcødé 日本`;

before(async () => {
  requirePython();
  tmp = mkdtempSync(path.join(tmpdir(), 'aft-it-ssh-'));
  sshd = await startSshd();
  // The "remote" runner is this checkout's, reached through sshd like a deployed one would be.
  target = sshTarget(
    sshd.destination,
    { python: PYTHON, runnerDir: RUNNER_DIR, setup: ['cd /'] },
    { controlDir: sshd.controlDir },
  );
});
after(async () => {
  await target?.closeShared();
  await sshd?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

test(
  'a real run over ssh: odd paths arrive unchanged, nothing runs, kills of ssh lose nothing',
  { timeout: 180_000 },
  async (t) => {
    const base = path.join(tmp, nasty);
    mkdirSync(base);
    const data = path.join(base, 'data');
    const train = await makeData(target, data);
    assert.equal(train, data, 'make-demo-data got the path unchanged');
    const spec = path.join(base, 'spec.json');
    writeSpec(spec, train);

    const run = await launchRun(target, spec, path.join(base, 'runs'));
    assert.equal(path.dirname(run.run_dir), path.join(base, 'runs'));
    try {
      const clean = await followCleanAndKilled(target, run.run_dir, (m) => t.diagnostic(m));

      const spec0 = runStarted(clean.events).spec as { data: { train: string } };
      assert.equal(spec0.data.train, data, 'run_started.spec.data.train is the path as written');
    } finally {
      await waitForExit(run.pid);
    }
    await assertNoAttachLeft(run.run_dir);

    // `cd /` ran first, so a marker could land in /, the login home, here, or next to the data.
    for (const dir of ['/', userInfo().homedir, process.cwd(), tmp, base, path.join(base, 'runs')]) {
      for (const m of markers)
        assert.equal(existsSync(path.join(dir, m)), false, `${path.join(dir, m)} exists: the shell ran it`);
    }
    assert.deepEqual(readdirSync(tmp), [nasty], 'nothing else was created next to the data');
  },
);
