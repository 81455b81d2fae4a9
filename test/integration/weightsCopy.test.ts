// The air-gapped copy over a real OpenSSH server on 127.0.0.1: a weights file goes to the target's
// weights cache (a folder whose name is full of spaces, quotes and shell syntax), arrives byte for
// byte with its sha256 checked there, is not sent again when it is already there, resumes a partial
// copy, and a file from this machine's cache keeps its cache place so `mindcv:` finds it there.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import type { TargetDef } from '../../src/core/targets/model';
import { copyWeightsToTarget, sha256File, weightsRelPath } from '../../src/core/targets/weightsCopy';
import { PYTHON, requirePython } from './realRun';
import { startSshd, type Sshd } from './sshd';

let tmp: string;
let sshd: Sshd;

before(async () => {
  requirePython();
  tmp = mkdtempSync(path.join(tmpdir(), 'aft-it-weights-'));
  sshd = await startSshd();
});
after(async () => {
  await sshd?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

function target(): TargetDef {
  return {
    id: 'ssh:loopback',
    kind: 'ssh',
    label: 'loopback',
    source: 'settings',
    description: '',
    runsRoot: path.join(tmp, 'runs'),
    ssh: { dest: sshd.destination, runner: { python: PYTHON }, deploy: false },
  };
}

test(
  'a weights file is copied into the target cache, checked, not re-sent, and resumed',
  { timeout: 120_000 },
  async () => {
    const marker = path.join(tmp, 'injected');
    const cacheRoot = path.join(tmp, `cache "dir" $(touch ${marker}) it's; `);
    const localDir = path.join(tmp, `my weights 'v1' "final"`);
    mkdirSync(localDir);
    const local = path.join(localDir, `resnet 50 "ft" it's.ckpt`);
    const body = randomBytes(3 << 20);
    writeFileSync(local, body);
    const opts = { controlDir: sshd.controlDir, cacheRoot };
    const rel = weightsRelPath(local, path.join(tmp, 'elsewhere'));
    assert.equal(rel, `local/resnet 50 "ft" it's.ckpt`);

    const first = await copyWeightsToTarget(target(), local, rel, opts);
    const want = path.join(cacheRoot, 'weights', 'local', `resnet 50 "ft" it's.ckpt`);
    assert.equal(first.remotePath, want);
    assert.equal(first.outcome, 'copied');
    assert.equal(first.sent, body.length);
    assert.ok(readFileSync(want).equals(body));
    assert.equal(first.sha256, await sha256File(local));
    assert.ok(!existsSync(marker), 'the folder name was not run by a shell');

    const again = await copyWeightsToTarget(target(), local, rel, opts);
    assert.deepEqual([again.outcome, again.sent], ['current', 0]);

    // An earlier copy broke off after 1 MiB: the next one sends only the rest.
    rmSync(want);
    writeFileSync(want + '.part', body.subarray(0, 1 << 20));
    const resumed = await copyWeightsToTarget(target(), local, rel, opts);
    assert.deepEqual([resumed.outcome, resumed.sent], ['copied', body.length - (1 << 20)]);
    assert.ok(readFileSync(want).equals(body));
    assert.deepEqual(
      readdirSync(path.dirname(want)).sort(),
      [path.basename(want), `${path.basename(want)}.sha256.json`],
      'no .part left; the download record beside the file',
    );
    const record = JSON.parse(readFileSync(`${want}.sha256.json`, 'utf8')) as { sha256: string; bytes: number };
    assert.deepEqual([record.sha256, record.bytes], [first.sha256, body.length]);
  },
);

test(
  'a partial copy of another file fails the hash check on arrival and is deleted',
  { timeout: 120_000 },
  async () => {
    const cacheRoot = path.join(tmp, 'cache two');
    const local = path.join(tmp, 'w.ckpt');
    writeFileSync(local, randomBytes(1 << 20));
    const dest = path.join(cacheRoot, 'weights', 'local', 'w.ckpt');
    mkdirSync(path.dirname(dest), { recursive: true });
    writeFileSync(dest + '.part', randomBytes(1000)); // not a prefix of this file
    await assert.rejects(
      copyWeightsToTarget(target(), local, 'local/w.ckpt', { controlDir: sshd.controlDir, cacheRoot }),
      /sha256 on arrival is [0-9a-f]{64}, expected [0-9a-f]{64}: the copy was deleted/,
    );
    assert.ok(!existsSync(dest + '.part') && !existsSync(dest));
    // The next attempt starts from zero and succeeds.
    const ok = await copyWeightsToTarget(target(), local, 'local/w.ckpt', { controlDir: sshd.controlDir, cacheRoot });
    assert.equal(ok.outcome, 'copied');
    assert.ok(readFileSync(dest).equals(readFileSync(local)));
  },
);

test('a file from the local cache keeps its place in the target cache', () => {
  const cache = path.join(tmp, 'local cache', 'weights');
  assert.equal(
    weightsRelPath(path.join(cache, 'mindcv', 'resnet50-e0733ab8.ckpt'), cache),
    'mindcv/resnet50-e0733ab8.ckpt',
  );
  assert.equal(
    weightsRelPath(path.join(cache, 'hf-hub', 'timm', 'resnet50.a1_in1k', 'main', 'model.safetensors'), cache),
    'hf-hub/timm/resnet50.a1_in1k/main/model.safetensors',
  );
});
