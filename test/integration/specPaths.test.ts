// The editor's checks of a spec meant for an SSH target, over a real OpenSSH server on 127.0.0.1:
// the runner's `probe` through src/core/spec/paths, paths full of shell syntax arriving unchanged, and
// the cache answering again without a new ssh process (counted, not timed); a target that is down
// costs one ssh attempt, not one per question.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { execFileSync } from 'node:child_process';
import { PathCache, probePaths } from '../../src/core/spec/paths';
import { describeImageFolder } from '../../src/core/wizard/imageFolders';
import { probeData, probeWeights } from '../../src/core/wizard/targetData';
import { sshTarget, type SshTarget, type Target } from '../../src/core/targets/target';
import { freePort } from '../support/net';
import { PYTHON, requirePython, RUNNER_DIR } from './realRun';
import { startSshd, type Sshd } from './sshd';

let tmp: string;
let sshd: Sshd;
let target: SshTarget;

before(async () => {
  requirePython();
  tmp = mkdtempSync(path.join(tmpdir(), 'aft-it-probe-'));
  sshd = await startSshd();
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

/** The target, counting the ssh processes it starts. */
function counting(t: Target): { target: Target; spawns: () => number } {
  let n = 0;
  return {
    target: { label: t.label, program: t.program, spawnRunner: (args, opts) => (n++, t.spawnRunner(args, opts)) },
    spawns: () => n,
  };
}

test(
  'probe over ssh: the facts of odd paths, then the same question answered from the cache',
  { timeout: 120_000 },
  async () => {
    const marker = path.join(tmp, 'injected');
    const data = path.join(tmp, `data $(touch ${marker}) it's; "q"`);
    for (const c of ['cat', 'dog', '.cache']) mkdirSync(path.join(data, c), { recursive: true });
    const one = path.join(tmp, 'one');
    mkdirSync(path.join(one, 'only'), { recursive: true });
    const weights = path.join(tmp, 'w.ckpt');
    writeFileSync(weights, Buffer.alloc(2048));
    const paths = [data, one, weights, path.join(tmp, 'missing')];

    const c = counting(target);
    const cache = new PathCache({ ttlMs: 60_000 });
    const ask = (todo: string[]) => probePaths(c.target, todo, { timeoutMs: 60_000 });
    const facts = await cache.get('ssh:loopback', paths, ask);
    assert.equal(c.spawns(), 1, 'four paths, one ssh call');
    const none = { images: 0, typical_size: null };
    assert.deepEqual(facts[0], {
      path: data,
      resolved: data,
      kind: 'folder',
      classes: ['cat', 'dog'],
      count: 2,
      ...none,
    });
    assert.deepEqual(facts[1], { path: one, resolved: one, kind: 'folder', classes: ['only'], count: 1, ...none });
    assert.deepEqual(facts[2], { path: weights, resolved: weights, kind: 'file', bytes: 2048 });
    assert.equal(facts[3].kind, 'missing');
    assert.ok(!existsSync(marker) && !existsSync(path.join('/', 'injected')), 'the path ran nothing');

    const again = await cache.get('ssh:loopback', [weights, data], ask);
    assert.deepEqual(again, [facts[2], facts[0]]);
    assert.equal(c.spawns(), 1, 'answered from the cache: no new ssh process');

    await cache.get('ssh:loopback', [data, path.join(tmp, 'new')], ask);
    assert.equal(c.spawns(), 2, 'only the new path is asked about');
  },
);

test(
  "the wizard's data and weights facts over ssh: the same counts and image size as a local folder gives",
  { timeout: 120_000 },
  async () => {
    const data = path.join(tmp, 'remote shapes');
    execFileSync(PYTHON, ['-m', 'ascend_finetune', 'make-demo-data', data, '--per-class', '7', '--size', '48'], {
      cwd: RUNNER_DIR,
      stdio: 'pipe',
    });
    const local = describeImageFolder(data);
    assert.ok(local, 'the demo data is an image folder');
    const remote = await probeData(target, data, { timeoutMs: 60_000 });
    assert.deepEqual(remote, { classes: local.classes, images: local.images, typicalSize: local.typicalSize });
    assert.deepEqual(remote, { classes: 4, images: 28, typicalSize: 48 });

    // A run's checkpoint says what it was trained as; a loose file says nothing.
    const run = path.join(tmp, 'run-a');
    mkdirSync(path.join(run, 'checkpoints'), { recursive: true });
    writeFileSync(path.join(run, 'checkpoints', 'a-e1-s2.ckpt'), Buffer.alloc(16));
    const spec = { model: { backbone: 'resnet18' }, data: { image_size: 32 } };
    writeFileSync(path.join(run, 'spec.json'), JSON.stringify(spec));
    const w = await probeWeights(target, path.join(run, 'checkpoints', 'a-e1-s2.ckpt'), { timeoutMs: 60_000 });
    assert.deepEqual(w, { backbone: 'resnet18', imageSize: 32 });
    assert.deepEqual(await probeWeights(target, path.join(tmp, 'w.ckpt'), { timeoutMs: 60_000 }), {});
  },
);

test(
  'probe over ssh to a port where nothing listens: an error naming ssh, and one attempt for several questions',
  { timeout: 120_000 },
  async () => {
    const port = await freePort();
    const down = counting(
      sshTarget(
        { ...sshd.destination, port },
        { python: PYTHON, runnerDir: RUNNER_DIR },
        { controlDir: sshd.controlDir },
      ),
    );
    const cache = new PathCache();
    const ask = (todo: string[]) => probePaths(down.target, todo, { timeoutMs: 60_000 });
    await assert.rejects(cache.get('ssh:down', ['/a'], ask), (e: Error) => /ssh|connect|refused/i.test(e.message));
    await assert.rejects(cache.get('ssh:down', ['/b'], ask));
    assert.equal(down.spawns(), 1);
  },
);
