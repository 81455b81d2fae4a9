// The air-gapped copy's pure parts (src/core/targets/weightsCopy.ts): where a local file goes in the
// target's weights cache (a file from outside this machine's cache under a piece of its sha256, so two
// files of one name do not replace each other), and how the target script's answer is read: status
// codes and values, never a sentence; no answer is ssh's failure with its last stderr line.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import { pretrainedValue, readAnswer, weightsRelPath } from '../../../src/core/targets/weightsCopy';

const A = 'ab'.repeat(32);
const B = 'cd'.repeat(32);

test('a file outside the local cache goes under the start of its sha256; a cached file keeps its place', () => {
  const cache = path.join('/home/u/.cache/ascend-finetune', 'weights');
  assert.equal(weightsRelPath('/data/run1/model.safetensors', cache, A), `local/${A.slice(0, 12)}/model.safetensors`);
  assert.notEqual(
    weightsRelPath('/data/run1/model.safetensors', cache, A),
    weightsRelPath('/data/run2/model.safetensors', cache, B),
  );
  assert.equal(weightsRelPath(path.join(cache, 'mindcv', 'r50.ckpt'), cache, A), 'mindcv/r50.ckpt');
  // The cache folder itself, or a file beside it, is not in it.
  assert.equal(weightsRelPath(`${cache}x/w.ckpt`, cache, A), `local/${A.slice(0, 12)}/w.ckpt`);
  assert.throws(() => weightsRelPath('/data/w.ckpt', cache, 'not a hash'), /not a sha256/);
});

test("the target script's answer: statuses with values, and ssh's failure when there is none", () => {
  const line = (o: object) => `noise from a profile\n${JSON.stringify(o)}\n`;
  assert.deepEqual(readAnswer(0, line({ status: 'done', dest: '/w/x', sha256: A }), ''), {
    status: 'done',
    dest: '/w/x',
    sha256: A,
  });
  assert.deepEqual(readAnswer(3, line({ status: 'incomplete', dest: '/w/x', part: 10, size: 30 }), ''), {
    code: 'incomplete',
    part: 10,
    size: 30,
  });
  assert.deepEqual(readAnswer(1, line({ status: 'sha256-mismatch', got: A, want: B }), ''), {
    code: 'sha256-mismatch',
    got: A,
    want: B,
  });
  assert.deepEqual(readAnswer(1, line({ status: 'too-long', size: 5 }), ''), { code: 'too-long', size: 5 });
  assert.deepEqual(readAnswer(5, line({ status: 'busy', dest: '/w/x' }), ''), { code: 'busy' });
  assert.deepEqual(readAnswer(6, line({ status: 'unsafe', path: '/c/weights/local', uid: 12345 }), ''), {
    code: 'unsafe',
    path: '/c/weights/local',
    uid: 12345,
  });
  assert.deepEqual(readAnswer(4, line({ status: 'os-error', detail: '[Errno 28] No space left on device' }), ''), {
    code: 'os-error',
    detail: '[Errno 28] No space left on device',
  });
  assert.deepEqual(readAnswer(255, '', 'Warning: x\nssh: connect to host h port 22: Connection refused\n'), {
    code: 'ssh-failed',
    exit: 255,
    detail: 'ssh: connect to host h port 22: Connection refused',
  });
  // A success status with a failed exit, or values of the wrong type, is no answer.
  assert.equal(
    (readAnswer(1, line({ status: 'done', dest: '/w/x' }), 'Traceback') as { code: string }).code,
    'ssh-failed',
  );
  assert.equal(
    (readAnswer(3, line({ status: 'incomplete', part: '10', size: 30 }), '') as { code: string }).code,
    'ssh-failed',
  );
});

test("model.pretrained for a copied file: a cache place is its source's name, any other file its path there", () => {
  const at = (rel: string) => `/home/u/.cache/ascend-finetune/weights/${rel}`;
  const value = (rel: string) => pretrainedValue(rel, at(rel));
  // The runner then finds it in the target's cache and loads it with the source's preprocessing.
  assert.equal(value('mindcv/pit_xs-fea0d37e.ckpt'), 'mindcv:pit_xs');
  assert.equal(value('mindcv/resnet50-e0733ab8.ckpt'), 'mindcv:resnet50');
  assert.equal(
    value('hf-hub/timm/vit_base_patch32_224.augreg_in1k/main/model.safetensors'),
    'hf-hub:timm/vit_base_patch32_224.augreg_in1k',
  );
  assert.equal(
    value('hf-hub/timm/resnet50.a1_in1k/main/pytorch_model.bin'),
    'hf-hub:timm/resnet50.a1_in1k:pytorch_model.bin',
  );
  for (const rel of [
    `local/${A.slice(0, 12)}/model.safetensors`,
    'mindcv/unknown-00000000.ckpt',
    'mindcv/resnet152-beb689d8.ckpt', // in the catalog, but not a backbone the runner offers
    'hf-hub/someone/bert-base/main/model.safetensors', // no backbone for this architecture
    'hf-hub/timm/resnet50.a1_in1k/main/config.json',
  ]) {
    assert.equal(value(rel), at(rel), rel);
  }
});
