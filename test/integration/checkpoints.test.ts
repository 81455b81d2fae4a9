// The checkpoint explorer's core against the REAL runner: one tiny frozen-backbone run trained here,
// then read, verify, inspect, compare, evaluate, export, delete and prune through
// src/core/checkpoints/, on this machine and over a real OpenSSH server on 127.0.0.1, plus a
// download over ssh with its sha256 check (and a mismatch that leaves nothing behind).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import {
  checkpointPath,
  classMismatch,
  compareCheckpoints,
  deleteCheckpoints,
  evaluateCheckpoint,
  exportCheckpoint,
  inspectCheckpoint,
  verifyCheckpoints,
} from '../../src/core/checkpoints/client';
import { verifyProblem } from '../../src/core/checkpoints/describe';
import { downloadCheckpoint, IntegrityError } from '../../src/core/checkpoints/download';
import { prunePlan } from '../../src/core/checkpoints/prune';
import { readRunCheckpoints } from '../../src/core/checkpoints/runInfo';
import { RunnerError, runnerArgs, runRunner } from '../../src/core/targets/runnerCli';
import { localTarget, sshTarget, type SshTarget, type Target } from '../../src/core/targets/target';
import type { PythonTargetFactory } from '../../src/core/targets/ops';
import { makeData, PYTHON, requirePython, RUNNER_DIR } from './realRun';
import { startSshd, type Sshd } from './sshd';

let tmp: string;
let sshd: Sshd;
let local: Target;
let localPy: PythonTargetFactory;
let ssh: SshTarget;
let sshPy: PythonTargetFactory;
const sshTargets: SshTarget[] = [];
let data: string;
let runDir: string;

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
const manifest = () =>
  JSON.parse(readFileSync(path.join(runDir, 'checkpoints.json'), 'utf8')) as {
    file: string;
    best: boolean;
    sha256: string;
    bytes: number;
  }[];

before(async () => {
  requirePython();
  // No spaces or quotes here: MindSpore's export refuses such paths (see the report; ssh.test.ts
  // covers odd paths over ssh for every other command).
  tmp = mkdtempSync(path.join(tmpdir(), 'aft-it-ckpt-'));
  sshd = await startSshd();
  local = localTarget({ python: PYTHON, runnerDir: RUNNER_DIR });
  localPy = (launcher) => localTarget({ python: PYTHON, runnerDir: RUNNER_DIR, launcher });
  const remote = (launcher?: readonly string[]) => {
    const t = sshTarget(
      sshd.destination,
      { python: PYTHON, runnerDir: RUNNER_DIR, setup: ['cd /'], launcher },
      { controlDir: sshd.controlDir },
    );
    sshTargets.push(t);
    return t;
  };
  ssh = remote();
  sshPy = (launcher) => remote(launcher);

  // A frozen backbone (so compare can show it unchanged), a checkpoint every 2 steps: 4 checkpoints.
  data = await makeData(local, path.join(tmp, 'data'));
  const spec = path.join(tmp, 'spec.json');
  writeFileSync(
    spec,
    JSON.stringify({
      name: 'ck',
      data: { train: data, image_size: 32, batch_size: 16, workers: 2 },
      model: { backbone: 'resnet18', freeze: 'backbone' },
      train: { epochs: 2, lr: 0.01 },
      amp: { level: 'O0' },
      checkpoint: { every_steps: 2 },
      device: { target: 'CPU' },
    }),
  );
  runDir = path.join(tmp, 'runs', 'r1');
  await runRunner(local, runnerArgs.train(spec, runDir), { timeoutMs: 240_000 });
});

after(async () => {
  for (const t of sshTargets.splice(0)) await t.closeShared();
  await sshd?.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

test(
  'local: the run reads back as the files are; inspect, compare, evaluate, export, delete',
  { timeout: 240_000 },
  async (t) => {
    const info = await readRunCheckpoints(localPy, runDir);
    assert.deepEqual(info.problems, []);
    assert.equal(info.freeze, 'backbone');
    assert.deepEqual(info.classes, ['blue triangle', 'green square', 'red circle', 'yellow cross']);
    assert.deepEqual(
      info.checkpoints.map((c) => c.step),
      [2, 3, 4, 6],
    );
    const written = manifest();
    assert.deepEqual(
      info.checkpoints.map((c) => c.best),
      written.map((e) => e.best),
      'best as checkpoints.json has it',
    );
    assert.equal(info.checkpoints.filter((c) => c.best).length, 1);
    for (const c of info.checkpoints)
      assert.equal(c.sha256, sha256(checkpointPath(runDir, c.file)), `${c.file}: the parsed sha256 is the file's`);
    assert.deepEqual(
      (await verifyCheckpoints(local, runDir)).map((x) => verifyProblem(x)),
      [undefined, undefined, undefined, undefined],
    );

    const first = checkpointPath(runDir, info.checkpoints[0].file);
    const last = checkpointPath(runDir, info.checkpoints[3].file);
    const ins = await inspectCheckpoint(local, last, runDir);
    assert.equal(ins.head_out, 4);
    assert.equal(ins.head_matches_classes, true);
    const params = ins.tensors.filter((x) => x.trainable !== null);
    assert.ok(
      params.filter((x) => x.group.startsWith('backbone.')).every((x) => x.trainable === false),
      'the backbone is frozen',
    );
    assert.ok(
      params.filter((x) => x.group === 'head').every((x) => x.trainable === true),
      'the head trains',
    );
    assert.ok(ins.tensors.some((x) => x.group === 'optimizer'));

    const cmp = await compareCheckpoints(local, first, last, runDir);
    assert.equal(cmp.summary.frozen_max_l2, 0, 'the frozen backbone did not move at all');
    assert.ok(cmp.tensors.filter((x) => x.frozen).every((x) => x.l2_diff === 0));
    assert.ok(
      cmp.tensors.some((x) => x.name.startsWith('head.') && (x.l2_diff ?? 0) > 0),
      'the head did',
    );
    t.diagnostic(
      `compare: ${cmp.summary.changed} changed, ${cmp.summary.unchanged} unchanged of ${cmp.summary.tensors}`,
    );

    const best = info.checkpoints.find((c) => c.best)!;
    const ev = await evaluateCheckpoint(local, runDir, checkpointPath(runDir, best.file));
    assert.deepEqual(ev.classes, info.classes);
    assert.equal(ev.confusion.length, 4);
    assert.equal(
      ev.confusion.flat().reduce((a, b) => a + b, 0),
      ev.num_images,
    );
    assert.ok(ev.accuracy !== null && ev.accuracy >= 0 && ev.accuracy <= 1);
    const again = await readRunCheckpoints(localPy, runDir);
    assert.equal(
      again.checkpoints.find((c) => c.file === best.file)?.lastEval?.accuracy,
      ev.accuracy,
      'the result is kept with the checkpoint',
    );

    // A folder whose classes differ: the missing and the extra class are named.
    const other = path.join(tmp, 'other data');
    cpSync(data, other, { recursive: true });
    renameSync(path.join(other, 'red circle'), path.join(other, 'purple blob'));
    const err = await evaluateCheckpoint(local, runDir, last, { data: other }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.deepEqual(classMismatch(err) && [classMismatch(err)!.missing, classMismatch(err)!.extra], [
      ['red circle'],
      ['purple blob'],
    ]);

    const ex = await exportCheckpoint(local, runDir, last, 'mindir');
    assert.equal(ex.file, last.replace(/\.ckpt$/, '.mindir'));
    assert.deepEqual(ex.input_shape, [1, 3, 32, 32]);
    // What a deployment needs beside the model: its input's preprocessing and its outputs' class names.
    assert.equal(ex.preprocessFile, last.replace(/\.ckpt$/, '.preprocess.json'));
    const beside = JSON.parse(readFileSync(ex.preprocessFile!, 'utf8'));
    assert.deepEqual(beside.classes, JSON.parse(readFileSync(path.join(runDir, 'classes.json'), 'utf8')));
    assert.equal(beside.preprocess.name, 'imagenet');
    const withExport = await readRunCheckpoints(localPy, runDir);
    assert.deepEqual(
      withExport.checkpoints[3].exports.map((x) => x.format),
      ['mindir'],
      'the export is listed under its checkpoint',
    );

    // Delete: the best is refused without --allow-best; a plain one goes, from disk and the manifest.
    await assert.rejects(
      deleteCheckpoints(local, runDir, [best.file]),
      (e: unknown) => e instanceof RunnerError && e.exitCode === 2 && /best/.test(e.message),
    );
    const plain = info.checkpoints.find((c) => !c.best)!;
    const del = await deleteCheckpoints(local, runDir, [plain.file]);
    assert.deepEqual(del.deleted, [plain.file]);
    assert.equal(existsSync(checkpointPath(runDir, plain.file)), false);
    assert.ok(!manifest().some((e) => e.file === plain.file));
  },
);

test(
  'over ssh: the same reads, compare and eval; prune keeps best + newest; download checks sha256',
  { timeout: 240_000 },
  async (t) => {
    const here = await readRunCheckpoints(localPy, runDir);
    const there = await readRunCheckpoints(sshPy, runDir);
    assert.deepEqual(there.checkpoints, here.checkpoints, 'the same checkpoints over ssh');
    const a = there.checkpoints[0];
    const z = there.checkpoints.at(-1)!;
    assert.ok(there.checkpoints.length >= 3, 'three checkpoints left after the local test');

    const cmp = await compareCheckpoints(ssh, checkpointPath(runDir, a.file), checkpointPath(runDir, z.file), runDir);
    assert.equal(cmp.summary.frozen_max_l2, 0);
    const ins = await inspectCheckpoint(ssh, checkpointPath(runDir, z.file), runDir);
    assert.equal(ins.sha256, z.sha256);
    const ev = await evaluateCheckpoint(ssh, runDir, checkpointPath(runDir, z.file));
    assert.equal(ev.classes.length, 4);

    // Download over ssh with progress and the manifest's sha256.
    const dl = path.join(tmp, 'workspace', 'checkpoints');
    const seen: number[] = [];
    const t0 = performance.now();
    const got = await downloadCheckpoint(
      sshPy,
      checkpointPath(runDir, z.file),
      path.join(dl, 'z.ckpt'),
      { bytes: z.bytes, sha256: z.sha256 },
      { onProgress: (d) => seen.push(d) },
    );
    assert.equal(got.verified, true);
    assert.equal(sha256(path.join(dl, 'z.ckpt')), z.sha256);
    assert.equal(seen.at(-1), z.bytes);
    const s = (performance.now() - t0) / 1000;
    t.diagnostic(
      `downloaded ${got.bytes} bytes over ssh in ${s.toFixed(2)} s (${(got.bytes / 1e6 / s).toFixed(0)} MB/s, sha256 checked while streaming), ${seen.length} progress reports`,
    );
    // A manifest whose sha256 no longer matches: the partial file is deleted, and the error says so.
    await assert.rejects(
      downloadCheckpoint(sshPy, checkpointPath(runDir, a.file), path.join(dl, 'a.ckpt'), {
        bytes: a.bytes,
        sha256: 'a'.repeat(64),
      }),
      (e: unknown) => e instanceof IntegrityError && /partial download was deleted/.test(e.message),
    );
    assert.deepEqual(readdirSync(dl), ['z.ckpt']);

    // Prune over ssh: keep the best and the newest 1.
    const plan = prunePlan(there.checkpoints, 1);
    const best = there.checkpoints.find((c) => c.best)!;
    assert.ok(plan.keep.includes(best.file) && plan.keep.includes(z.file));
    assert.ok(plan.drop.length >= 1);
    const res = await deleteCheckpoints(ssh, runDir, plan.drop);
    assert.deepEqual([...res.deleted].sort(), [...plan.drop].sort());
    assert.deepEqual(
      manifest()
        .map((e) => e.file)
        .sort(),
      [...plan.keep].sort(),
    );
    for (const f of plan.drop) assert.equal(existsSync(checkpointPath(runDir, f)), false, `${f} deleted`);

    // A truncated checkpoint is reported by verify (the view's error icon), never a crash.
    truncateSync(checkpointPath(runDir, z.file), 1000);
    const v = await verifyCheckpoints(ssh, runDir);
    const bad = v.find((x) => x.file === z.file)!;
    assert.match(verifyProblem(bad) ?? '', /size|truncat/);
    await assert.rejects(
      inspectCheckpoint(ssh, checkpointPath(runDir, z.file)),
      (e: unknown) => e instanceof RunnerError && e.exitCode === 2,
    );
    const after = await readRunCheckpoints(sshPy, runDir);
    assert.equal(after.checkpoints.length, plan.keep.length, 'the manifest still lists it; verify says what is wrong');
  },
);
