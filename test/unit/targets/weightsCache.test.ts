// This machine's weights cache read by the language server (src/core/targets/weightsCache.ts
// localCacheState) the way the runner's `weights-status` reads it, on real files: a cached file,
// a missing one with a `.part`, a symlink as the file (not followed), a symlinked folder (followed when
// you or root made it, as the runner's download follows it; another user's not), a file whose size no
// longer matches its download record. And the check of `weights-status`'s answer.
import assert from 'node:assert/strict';
import { lchownSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
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

test('a symlink as the file is not followed', () => {
  const secret = path.join(tmp, 'secret.ckpt');
  writeFileSync(secret, Buffer.alloc(3000));
  const weights = path.join(tmp, 'b', 'weights');
  mkdirSync(path.join(weights, 'mindcv'), { recursive: true });
  symlinkSync(secret, path.join(weights, 'mindcv', 'r18.ckpt'));
  const file = localCacheState(weights, 'mindcv/r18.ckpt');
  assert.deepEqual([file.state, file.bytes], ['unsafe', null]);
  assert.match(file.why ?? '', /symbolic link/);
});

test("a symlinked folder is followed when you or root made it (weights on a bigger disk), not another user's", (t) => {
  const disk = path.join(tmp, 'disk');
  mkdirSync(path.join(disk, 'mindcv'), { recursive: true });
  writeFileSync(path.join(disk, 'mindcv', 'r18.ckpt'), Buffer.alloc(4000));
  const cache = path.join(tmp, 'd');
  mkdirSync(path.join(cache, 'e', 'weights'), { recursive: true });
  symlinkSync(disk, path.join(cache, 'weights')); // the whole weights folder elsewhere
  symlinkSync(path.join(disk, 'mindcv'), path.join(cache, 'e', 'weights', 'mindcv')); // one folder below it
  const places = [path.join(cache, 'weights'), path.join(cache, 'e', 'weights')];
  for (const weights of places) {
    const own = localCacheState(weights, 'mindcv/r18.ckpt');
    assert.deepEqual([own.state, own.bytes, own.path], ['cached', 4000, path.join(weights, 'mindcv', 'r18.ckpt')]);
    assert.equal(localCacheState(weights, 'mindcv/r50.ckpt').state, 'missing');
  }
  symlinkSync(path.join(tmp, 'nowhere'), path.join(cache, 'e', 'weights', 'hf-hub'));
  assert.equal(localCacheState(places[1], 'hf-hub/timm/x/main/model.safetensors').state, 'missing'); // dangling
  if (process.getuid?.() !== 0) return t.skip('only root can give a link to another owner');
  lchownSync(path.join(cache, 'weights'), 0, 0);
  assert.equal(localCacheState(places[0], 'mindcv/r18.ckpt').state, 'cached'); // root's
  for (const [weights, link] of [
    [places[0], places[0]],
    [places[1], path.join(places[1], 'mindcv')],
  ]) {
    lchownSync(link, 12345, 12345); // no such user here: another user's
    const other = localCacheState(weights, 'mindcv/r18.ckpt');
    assert.deepEqual([other.state, other.bytes], ['unsafe', null]);
    assert.equal(other.why, `${path.basename(link)}: a symlink neither you nor root own, not followed`);
  }
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
