// This machine's weights cache read by the language server (src/core/targets/weightsCache.ts
// localCacheState) the way the runner's `weights-status` reads it, on real files: a cached file,
// a missing one with a `.part`, a planted symlink (file or folder) that is not followed, a file whose
// size no longer matches its download record. And the check of `weights-status`'s answer.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { asCacheListing, localCacheState } from '../../../src/core/targets/weightsCache';
import { namedCacheRel } from '../../../src/core/spec/weightSources';

const tmp = mkdtempSync(path.join(tmpdir(), 'aft-wcache-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

test('named sources sit where the runner caches them', () => {
  assert.equal(namedCacheRel('mindcv:resnet50'), 'mindcv/resnet50-e0733ab8.ckpt');
  assert.equal(namedCacheRel('mindcv:resnet50#sha256=' + '0'.repeat(64)), 'mindcv/resnet50-e0733ab8.ckpt');
  assert.equal(namedCacheRel('hf-hub:timm/resnet50.a1_in1k'), 'hf-hub/timm/resnet50.a1_in1k/main/model.safetensors');
  assert.equal(namedCacheRel('hf-hub:timm/x:sub/w.bin'), 'hf-hub/timm/x/main/sub/w.bin');
  assert.equal(namedCacheRel('hf-hub:timm/x:../../etc/passwd'), undefined);
  assert.equal(namedCacheRel('mindcv:nope'), undefined);
});

test('a cached file, a missing one with a partial download, and a damaged one', () => {
  const weights = path.join(tmp, 'a', 'weights');
  mkdirSync(path.join(weights, 'mindcv'), { recursive: true });
  writeFileSync(path.join(weights, 'mindcv', 'r18.ckpt'), Buffer.alloc(5000));
  writeFileSync(path.join(weights, 'mindcv', 'r50.ckpt.part'), Buffer.alloc(700));
  writeFileSync(path.join(weights, 'mindcv', 'r34.ckpt'), Buffer.alloc(100));
  writeFileSync(path.join(weights, 'mindcv', 'r34.ckpt.sha256.json'), JSON.stringify({ sha256: 'x', bytes: 9000 }));
  const r18 = localCacheState(weights, 'mindcv/r18.ckpt');
  assert.deepEqual([r18.state, r18.bytes, r18.path], ['cached', 5000, path.join(weights, 'mindcv', 'r18.ckpt')]);
  const r50 = localCacheState(weights, 'mindcv/r50.ckpt');
  assert.deepEqual([r50.state, r50.partBytes], ['missing', 700]);
  const r34 = localCacheState(weights, 'mindcv/r34.ckpt');
  assert.deepEqual([r34.state, r34.bytes], ['damaged', 100]);
  assert.equal(localCacheState(path.join(tmp, 'none', 'weights'), 'mindcv/r18.ckpt').state, 'missing');
});

test('a planted symlink, as the file or as a folder on the way, is not followed', () => {
  const secret = path.join(tmp, 'secret.ckpt');
  writeFileSync(secret, Buffer.alloc(3000));
  const weights = path.join(tmp, 'b', 'weights');
  mkdirSync(path.join(weights, 'mindcv'), { recursive: true });
  symlinkSync(secret, path.join(weights, 'mindcv', 'r18.ckpt'));
  const file = localCacheState(weights, 'mindcv/r18.ckpt');
  assert.deepEqual([file.state, file.bytes], ['unsafe', null]);
  assert.match(file.why ?? '', /symbolic link/);
  const other = path.join(tmp, 'c', 'weights');
  mkdirSync(other, { recursive: true });
  symlinkSync(path.join(weights, 'mindcv'), path.join(other, 'mindcv'));
  assert.equal(localCacheState(other, 'mindcv/r18.ckpt').state, 'unsafe');
});

test("weights-status's answer is checked", () => {
  const m = asCacheListing({
    cache: '/c',
    sources: [{ source: 'mindcv:resnet18', path: '/c/x', state: 'cached', bytes: 5, part_bytes: 0 }],
  });
  assert.deepEqual(m.get('mindcv:resnet18'), {
    source: 'mindcv:resnet18',
    path: '/c/x',
    state: 'cached',
    bytes: 5,
    partBytes: 0,
    why: undefined,
  });
  assert.throws(() => asCacheListing({ sources: [{ source: 'mindcv:x', path: '/p', state: 'gone' }] }), /bad entry/);
  assert.throws(() => asCacheListing({ error: { kind: 'x' } }), /no "sources"/);
});
