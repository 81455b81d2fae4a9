// The runner over real ssh logins whose shells are not POSIX: fish and tcsh. sshd runs the one
// command string with the account's login shell, so the quoting, the set-up line (runnerDir makes
// it prepend PYTHONPATH) and every hostile path must come through each of them unchanged.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { followRun } from '../../src/core/runs/attach';
import { launchRun, runRunner, runnerArgs } from '../../src/core/targets/runnerCli';
import { sshTarget, type SshTarget } from '../../src/core/targets/target';
import type { RunEvent } from '../../src/shared/eventsProtocol';
import { fileEvents, makeData, PYTHON, requirePython, RUNNER_DIR, waitForExit, writeSpec } from './realRun';
import { startSshd, type Sshd } from './sshd';

const SHELLS = ['/usr/bin/fish', '/bin/tcsh'];

let tmp: string;
let sshd: Sshd;
const targets: SshTarget[] = [];
const tag = Math.random().toString(36).slice(2, 8);
const markers = [1, 2, 3, 4, 5].map((i) => `aft-marker-${tag}-${i}`);
// Quotes, expansions, separators, history `!`, a glob, a newline, and a trailing backslash (which
// in fish escaped the closing quote and let the next argument run as a command).
const nasty =
  `it's "q" $(touch ${markers[0]}) \`touch ${markers[1]}\`; touch ${markers[2]}; ` + `!! !touch * ~ {a,b}\nline two \\`;
/** An argument that runs a command in any shell that lost the quoting just before it. */
const planted = `'; touch ${markers[3]}; echo "; touch ${markers[4]} #`;

before(async () => {
  requirePython();
  tmp = mkdtempSync(path.join(tmpdir(), 'aft-it-shells-'));
  sshd = await startSshd();
});
after(async () => {
  for (const t of targets) await t.closeShared();
  await sshd?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

function targetFor(shell: string, launcher?: readonly string[]): SshTarget {
  const t = sshTarget(
    sshd.addLoginUser(shell),
    { python: PYTHON, runnerDir: RUNNER_DIR, setup: ['cd /'], launcher },
    { controlDir: sshd.controlDir },
  );
  targets.push(t);
  return t;
}

function assertNoMarkers(...dirs: string[]): void {
  for (const dir of ['/', userInfo().homedir, process.cwd(), tmp, ...dirs]) {
    for (const m of markers) assert.equal(existsSync(path.join(dir, m)), false, `${path.join(dir, m)}: a shell ran it`);
  }
}

for (const shell of SHELLS) {
  test(`login shell ${shell}: argv, doctor, make-demo-data, validate and ls with hostile paths`, async () => {
    // Python's own argv, so that what arrived is compared with what was sent, element by element.
    const echo = targetFor(shell, [
      '-c',
      'import json, os, sys; print(json.dumps({"argv": sys.argv[1:], "pp": os.environ.get("PYTHONPATH")}))',
    ]);
    const sent = [nasty, planted, `${nasty}\\`, '', '\\', "\\'"];
    const got = await runRunner<{ argv: string[]; pp: string }>(echo, sent);
    assert.deepEqual(got.argv, sent);
    assert.equal(got.pp.split(':')[0], RUNNER_DIR, 'the set-up line ran: runnerDir is first on PYTHONPATH');

    const target = targetFor(shell);
    const doctor = await runRunner<{ python?: { ok?: boolean } }>(target, runnerArgs.doctor());
    assert.equal(doctor.python?.ok, true);

    const base = path.join(tmp, `${path.basename(shell)} ${nasty}`);
    mkdirSync(base);
    const data = path.join(base, 'data');
    assert.equal(await makeData(target, data), data);
    const spec = path.join(base, 'spec.json');
    writeSpec(spec, data);
    const valid = await runRunner<{ ok: boolean }>(target, runnerArgs.validate(spec));
    assert.equal(valid.ok, true);
    const listed = await runRunner<{ root: string; runs: unknown[] }>(target, runnerArgs.ls(base));
    assert.equal(listed.root, base, 'ls got the root, trailing backslash and all');
    assert.deepEqual(listed.runs, []);
    assertNoMarkers(base);
  });
}

test(
  'a short run launched through fish, followed through fish and read back through tcsh',
  { timeout: 180_000 },
  async () => {
    const fish = targetFor('/usr/bin/fish');
    const tcsh = targetFor('/bin/tcsh');
    const base = path.join(tmp, `run ${nasty}`);
    mkdirSync(base);
    const data = await makeData(fish, path.join(base, 'data'));
    const spec = path.join(base, 'spec.json');
    writeSpec(spec, data);
    const run = await launchRun(fish, spec, path.join(base, 'runs'));
    try {
      const followed: RunEvent[] = [];
      for await (const e of followRun({ runner: fish, runDir: run.run_dir, backoffMs: 50 })) followed.push(e);
      assert.equal(followed.at(-1)?.type, 'run_finished');
      assert.deepEqual(followed, fileEvents(run.run_dir));
      const again: RunEvent[] = [];
      for await (const e of followRun({ runner: tcsh, runDir: run.run_dir, follow: false })) again.push(e);
      assert.deepEqual(again, followed);
    } finally {
      await waitForExit(run.pid);
    }
    assertNoMarkers(base, path.join(base, 'runs'));
    assert.deepEqual(
      readdirSync(tmp).sort(),
      [`run ${nasty}`, ...SHELLS.map((s) => `${path.basename(s)} ${nasty}`)].sort(),
    );
  },
);
