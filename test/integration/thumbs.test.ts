// The predictions gallery's thumbnails through the REAL runner (`thumbs`, via
// src/core/checkpoints/client.ts), on this machine and over a real OpenSSH server on 127.0.0.1: a
// class folder named with shell syntax survives the ssh login shell, each thumbnail is a JPEG of its
// own image, and a name that leaves the data folder is refused on the target.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { fetchThumbs } from '../../src/core/checkpoints/client';
import { localTarget, sshTarget, type SshTarget, type Target } from '../../src/core/targets/target';
import { runRunner } from '../../src/core/targets/runnerCli';
import { PYTHON, requirePython, RUNNER_DIR } from './realRun';
import { startSshd, type Sshd } from './sshd';

const WEIRD = '$(touch pwned) `id` \'q" ;|&<>* ~x';
let tmp: string;
let sshd: Sshd;
let local: Target;
let ssh: SshTarget;
let data: string;

before(async () => {
  requirePython();
  tmp = mkdtempSync(path.join(tmpdir(), 'aft-it-thumbs-'));
  sshd = await startSshd();
  local = localTarget({ python: PYTHON, runnerDir: RUNNER_DIR });
  ssh = sshTarget(
    sshd.destination,
    { python: PYTHON, runnerDir: RUNNER_DIR, setup: ['cd /'] },
    { controlDir: sshd.controlDir },
  );
  // The demo set's four classes, and a folder named with shell syntax (filled in the test).
  data = (await runRunner<{ train: string }>(local, ['make-demo-data', path.join(tmp, 'd'), '--per-class', '2'])).train;
  mkdirSync(path.join(data, WEIRD));
});

after(async () => {
  await ssh?.closeShared();
  await sshd?.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

test('thumbnails over ssh are the same JPEGs as locally, with shell syntax in the class folder', async () => {
  // The weird folder holds a copy of a red circle: made by the runner's own Python, no shell involved.
  await runRunner(local, ['make-demo-data', path.join(data, WEIRD, 'sub'), '--per-class', '1']);
  const files = [
    `${WEIRD}/sub/red circle/0000.png`,
    'green square/0000.png',
    '../../etc/passwd',
    'blue triangle/none.png',
  ];
  const here = await fetchThumbs(local, data, files);
  const there = await fetchThumbs(ssh, data, files);
  assert.deepEqual(there, here, 'the same answer over ssh');
  assert.deepEqual(
    there.map((t) => t.file),
    files,
  );
  for (const t of there.slice(0, 2)) {
    const jpeg = Buffer.from(t.jpeg ?? '', 'base64');
    assert.deepEqual([...jpeg.subarray(0, 3)], [0xff, 0xd8, 0xff], `${t.file} is a JPEG`);
  }
  assert.match(there[2].error ?? '', /out of the data folder/);
  assert.ok(there[3].error, 'a missing file is its own error');
  assert.equal(
    existsSync(path.join(tmp, 'pwned')) || existsSync('/pwned') || existsSync(path.join(data, 'pwned')),
    false,
  );
});
