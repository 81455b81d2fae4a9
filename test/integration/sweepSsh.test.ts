// Start Sweep on an SSH target, over a real OpenSSH server on 127.0.0.1: a sweep file on this machine
// (in a folder whose name holds spaces, quotes and shell syntax) with its base run spec beside it and
// a relative data path, copied to the target with the base inline and started there under a runs
// root of the same kind; the sweep and its trial are then listed over ssh as the Runs view lists them
// (sweep-ls, ls, grouped under the sweep), and the trial trained on the data the base named.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { parseListing, RunIndex, type KeyValueStore } from '../../src/core/runs/runIndex';
import { listSweeps } from '../../src/core/sweeps/client';
import { groupRuns, sweepOf, trialOf } from '../../src/core/sweeps/grouping';
import { startSweepOnTarget, sweepSpecForTarget, SweepFileError } from '../../src/core/sweeps/remote';
import { runnerArgs, runRunner } from '../../src/core/targets/runnerCli';
import { sshTarget, type SshTarget } from '../../src/core/targets/target';
import { makeData, PYTHON, requirePython, RUNNER_DIR } from './realRun';
import { startSshd, type Sshd } from './sshd';

let tmp: string;
let sshd: Sshd;
let target: SshTarget;
const pythons: SshTarget[] = [];

before(async () => {
  requirePython();
  tmp = mkdtempSync(path.join(tmpdir(), 'aft-it-sweepssh-'));
  sshd = await startSshd();
  target = sshTarget(
    sshd.destination,
    { python: PYTHON, runnerDir: RUNNER_DIR, setup: ['cd /'] },
    { controlDir: sshd.controlDir },
  );
});
after(async () => {
  await target?.closeShared();
  for (const p of pythons) await p.closeShared();
  await sshd?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

function memoryStore(): KeyValueStore {
  const m = new Map<string, unknown>();
  return { get: <T>(k: string) => m.get(k) as T | undefined, update: async (k, v) => void m.set(k, v) };
}

/** `python -c CODE` on the target, as the extension's ctx.python(def) builds it. */
const python = (launcher: readonly string[]) => {
  const t = sshTarget(sshd.destination, { python: PYTHON, setup: ['cd /'], launcher }, { controlDir: sshd.controlDir });
  pythons.push(t);
  return t;
};

test(
  'a sweep file here starts on the SSH target with its base, odd paths intact, and its trial is listed beneath it',
  { timeout: 300_000 },
  async () => {
    const local = path.join(tmp, `my sweeps "v2" $(touch injected) it's`);
    mkdirSync(local);
    const train = await makeData(target, path.join(local, 'data'));
    const rel = path.relative(local, train);
    // The base beside the sweep file, its data path relative to itself (the runner would read it so).
    writeFileSync(
      path.join(local, `base "q" it's.ascend.yaml`),
      `name: sshsw
data: {train: ${JSON.stringify(rel)}, image_size: 32, batch_size: 16, workers: 1, val_split: 0.25}
model: {backbone: resnet18, pretrained: null, freeze: none}
train: {epochs: 1}
amp: {level: O0, loss_scale: none}
checkpoint: {keep_max: 1}
device: {target: CPU, telemetry_s: 0}
`,
    );
    const sweepFile = path.join(local, 'ssh-sweep.ascend-sweep.yaml');
    writeFileSync(
      sweepFile,
      `name: ssh-sweep
base: "./base \\"q\\" it's.ascend.yaml"
space:
  train.lr: {choices: [0.01]}
objective: {metric: best_val_acc}
trials: 1
sampler: grid
pruner: {kind: none}
devices: {ids: [0]}
`,
    );
    const root = path.join(tmp, `runs on "target" $(touch injected) it's; `);

    const { specPath, started } = await startSweepOnTarget(target, python, sweepFile, root, {
      timeoutMs: 120_000,
      now: new Date('2026-12-03T18:30:00Z'),
    });
    try {
      assert.match(specPath, /\/\.ascend-finetune\/sweeps\/20261203-183000-ssh-sweep\.ascend-sweep\.json$/);
      // The copy holds the base inline with the data path made absolute against the base's folder.
      const sent = JSON.parse(readFileSync(specPath, 'utf8')) as { base: { data: { train: string } } };
      assert.equal(sent.base.data.train, train);
      assert.equal(started.sweep_dir, path.join(root, 'sweeps', started.sweep_id));
      assert.equal(started.resumed, false);

      // The Runs view's listing over ssh: the sweep (sweep-ls) and its trial (ls, tagged), grouped.
      // Polled until the sweep has ended (one 1-epoch trial), with a deadline; nothing here is timed.
      const deadline = Date.now() + 240_000;
      for (;;) {
        const { sweeps } = await listSweeps(target, root, { timeoutMs: 60_000 });
        if (sweeps.some((s) => s.sweep_id === started.sweep_id && s.state !== 'running')) break;
        assert.ok(Date.now() < deadline, 'the sweep ends within 4 minutes');
        await sleep(1000);
      }
      const { sweeps } = await listSweeps(target, root, { timeoutMs: 60_000 });
      assert.equal(sweeps.length, 1);
      assert.equal(sweeps[0].state, 'completed', readFileSync(path.join(started.sweep_dir, 'events.jsonl'), 'utf8'));
      assert.equal(sweeps[0].counts?.complete, 1);
      const index = new RunIndex(memoryStore());
      const listed = parseListing(await runRunner(target, runnerArgs.ls(root), { timeoutMs: 60_000 }));
      await index.mergeListing('ssh:loopback', listed.runs);
      const records = index.byTarget().get('ssh:loopback') ?? [];
      const top = groupRuns(records, sweeps);
      assert.equal(top.length, 1, 'one top row: the sweep');
      assert.equal(top[0].kind, 'sweep');
      const trials = top[0].kind === 'sweep' ? top[0].group.trials : [];
      assert.deepEqual(
        trials.map((r) => [sweepOf(r), trialOf(r)]),
        [[started.sweep_id, 0]],
      );
      // The trial trained on the base's data, through the target's runner.
      const trialSpec = JSON.parse(readFileSync(path.join(trials[0].runDir, 'spec.json'), 'utf8')) as {
        data: { train: string };
        train: { lr: number };
      };
      assert.equal(trialSpec.data.train, train);
      assert.equal(trialSpec.train.lr, 0.01);
      for (const d of ['/', tmp, local, process.cwd()])
        assert.ok(!existsSync(path.join(d, 'injected')), `no path ran anything (${d})`);
    } finally {
      rmSync(specPath, { force: true });
    }
  },
);

test('a base that is not beside the sweep file is refused by name, before anything reaches the target', () => {
  const dir = mkdtempSync(path.join(tmp, 'nobase-'));
  const file = path.join(dir, 'x.ascend-sweep.yaml');
  writeFileSync(file, 'name: x\nbase: ./missing.ascend.yaml\n');
  assert.throws(
    () => sweepSpecForTarget(file),
    (e: Error) => e instanceof SweepFileError && /^base: /.test(e.message),
  );
  // An absolute base with no file here is the target's own (a sweep made from a run there): kept.
  writeFileSync(file, 'name: x\nbase: /srv/runs/r1/spec.json\n');
  assert.equal(sweepSpecForTarget(file).base, '/srv/runs/r1/spec.json');
});
