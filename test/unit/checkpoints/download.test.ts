import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import { downloadCheckpoint, downloadPath, IntegrityError } from '../../../src/core/checkpoints/download';
import { localTarget } from '../../../src/core/targets/target';
import type { PythonTargetFactory } from '../../../src/core/targets/ops';
import { wordedErrorText } from '../../../src/core/l10n';
import { translator } from '../../../src/shared/l10n';

const ZH = translator(
  JSON.parse(readFileSync(path.join(__dirname, '..', '..', '..', 'l10n', 'bundle.l10n.zh-cn.json'), 'utf8')) as Record<
    string,
    string
  >,
);

// The streaming side runs in a real Python, as on a target; the ssh transport is the integration test's.
const py: PythonTargetFactory = (launcher) => localTarget({ python: 'python3', launcher });

let tmp: string;
let src: string;
let data: Buffer;
let sha: string;
beforeEach(() => {
  tmp = mkdtempSync(path.join(tmpdir(), 'aft-dl-'));
  src = path.join(tmp, "remote it's $(x)", 'w-e1-s3.ckpt');
  data = randomBytes(3 * 1024 * 1024 + 17); // several chunks, not a multiple of the chunk size
  sha = createHash('sha256').update(data).digest('hex');
  const dir = path.dirname(src);
  mkdirSync(dir, { recursive: true });
  writeFileSync(src, data);
});
afterEach(() => rmSync(tmp, { recursive: true, force: true }));

test('a matching file arrives byte for byte, with progress up to its size', async () => {
  const dest = path.join(tmp, 'ws', 'run1', 'w-e1-s3.ckpt');
  const seen: number[] = [];
  const r = await downloadCheckpoint(
    py,
    src,
    dest,
    { bytes: data.length, sha256: sha },
    { onProgress: (d) => seen.push(d) },
  );
  assert.deepEqual([r.bytes, r.sha256, r.verified], [data.length, sha, true]);
  assert.ok(readFileSync(dest).equals(data));
  assert.equal(seen.at(-1), data.length);
  assert.ok(seen.length >= 3, 'progress while it streams');
  assert.ok(seen.every((v, i) => i === 0 || v >= seen[i - 1]));
  assert.deepEqual(readdirSync(path.dirname(dest)), ['w-e1-s3.ckpt'], 'no partial file left');
});

test('a sha256 mismatch deletes the partial file and says so', async () => {
  const dest = path.join(tmp, 'ws', 'w.ckpt');
  const wrong = 'f'.repeat(64);
  await assert.rejects(downloadCheckpoint(py, src, dest, { bytes: data.length, sha256: wrong }), (e: unknown) => {
    assert.ok(e instanceof IntegrityError);
    assert.match(e.message, /does not match checkpoints\.json.*partial download was deleted/);
    assert.equal(e.actual.sha256, sha);
    return true;
  });
  assert.equal(existsSync(dest), false);
  assert.deepEqual(readdirSync(path.dirname(dest)), []);
});

test('a truncated file (size differs from the manifest) is refused the same way', async () => {
  writeFileSync(src, data.subarray(0, 1000));
  const dest = path.join(tmp, 'ws', 'w.ckpt');
  await assert.rejects(downloadCheckpoint(py, src, dest, { bytes: data.length, sha256: sha }), (e: unknown) => {
    assert.match((e as Error).message, /1000 bytes arrived, checkpoints\.json says/);
    // The Download command shows it in the display language (errorText: the error's own words).
    assert.equal(
      wordedErrorText(e, ZH),
      `w-e1-s3.ckpt：收到 1000 字节，checkpoints.json 记录为 ${data.length}；已删除不完整的下载`,
    );
    return true;
  });
  assert.deepEqual(readdirSync(path.dirname(dest)), []);
});

test('a missing remote file is a clear error, and no file appears', async () => {
  const dest = path.join(tmp, 'ws', 'w.ckpt');
  await assert.rejects(
    downloadCheckpoint(py, path.join(tmp, 'nope.ckpt'), dest, { bytes: 1, sha256: sha }),
    /could not read .*nope\.ckpt.*No such file/,
  );
  assert.deepEqual(readdirSync(path.dirname(dest)), []);
});

test('without a sha256 in the manifest the file is kept but reported unverified', async () => {
  const dest = path.join(tmp, 'ws', 'w.ckpt');
  const r = await downloadCheckpoint(py, src, dest, { bytes: null, sha256: null });
  assert.equal(r.verified, false);
  assert.equal(r.sha256, sha);
});

test('download path: run id made safe, file name kept', () => {
  assert.equal(downloadPath('/ws/ckpts', '../../etc', 'checkpoints/a.ckpt'), '/ws/ckpts/etc/a.ckpt');
  assert.equal(
    downloadPath('/ws', '20261202-1-it-ab12', 'checkpoints/it-e1-s3.ckpt'),
    '/ws/20261202-1-it-ab12/it-e1-s3.ckpt',
  );
});
