import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  checkpointArgs,
  checkpointPath,
  classMismatch,
  groupOf,
  RunnerOutputError,
  toCompareResult,
  toEvalResult,
  toInspectResult,
  toVerifyEntries,
} from '../../../src/core/checkpoints/client';
import { classMismatchText, verifyProblem } from '../../../src/core/checkpoints/describe';
import { RunnerError } from '../../../src/core/targets/runnerCli';

const nasty = "/runs/it's $(x) `y`;&|/checkpoints/-e1.ckpt";

test('argv for every checkpoint command: one element per operand, options never taken from names', () => {
  assert.deepEqual(checkpointArgs.inspect('/r/c.ckpt', '/r'), ['inspect', '/r/c.ckpt', '--run', '/r']);
  assert.deepEqual(checkpointArgs.inspect('-c.ckpt'), ['inspect', './-c.ckpt']);
  assert.deepEqual(checkpointArgs.eval('/r', nasty, { data: '/d', batchSize: 8 }), [
    'eval',
    '--run',
    '/r',
    '--ckpt',
    nasty,
    '--data',
    '/d',
    '--batch-size',
    '8',
  ]);
  assert.deepEqual(checkpointArgs.export('/r', '/r/c.ckpt', 'onnx'), [
    'export',
    '--run',
    '/r',
    '--ckpt',
    '/r/c.ckpt',
    '--format',
    'onnx',
  ]);
  assert.deepEqual(checkpointArgs.compare('/a', '/b', '/r'), ['compare', '/a', '/b', '--run', '/r']);
  assert.deepEqual(checkpointArgs.deleteCheckpoints('/r', ['checkpoints/a.ckpt', '--allow-best'], false), [
    'delete-checkpoints',
    '--run',
    '/r',
    '--',
    'checkpoints/a.ckpt',
    '--allow-best',
  ]);
  assert.deepEqual(checkpointArgs.deleteCheckpoints('/r', ['x'], true), [
    'delete-checkpoints',
    '--run',
    '/r',
    '--allow-best',
    '--',
    'x',
  ]);
  assert.deepEqual(checkpointArgs.verify('/r'), ['verify', '--run', '/r']);
  assert.equal(checkpointPath('/runs/r1', 'checkpoints/a.ckpt'), '/runs/r1/checkpoints/a.ckpt');
});

test('inspect output (recorded shape): modules and trainability kept, missing ones derived', () => {
  const r = toInspectResult({
    file: '/r/c.ckpt',
    bytes: 10,
    sha256: 'ab',
    tensors: [
      {
        name: 'backbone.layer1.0.conv1.weight',
        shape: [64, 64, 3, 3],
        dtype: 'Float32',
        elements: 36864,
        module: 'backbone.layer1.0.conv1',
        trainable: false,
        kind: 'param',
      },
      {
        name: 'head.weight',
        shape: [4, 512],
        dtype: 'Float32',
        elements: 2048,
        module: 'head',
        trainable: true,
        kind: 'param',
      },
      { name: 'moments.head.weight', shape: [4, 512], dtype: 'Float32' },
      'junk',
    ],
    total_elements: 40960,
    head_out: 4,
    head_matches_classes: true,
  });
  assert.deepEqual(
    r.tensors.map((t) => [t.group, t.trainable, t.elements]),
    [
      ['backbone.layer1', false, 36864],
      ['head', true, 2048],
      ['optimizer', null, 2048],
    ],
  );
  assert.equal(r.head_matches_classes, true);
  assert.throws(() => toInspectResult({ file: 'x' }), RunnerOutputError);
  assert.equal(groupOf('backbone.layer3.1.bn2.gamma', 'param'), 'backbone.layer3');
  assert.equal(groupOf('global_step'), 'optimizer');
  assert.equal(groupOf('step_num', 'meta'), 'run state');
});

test('eval, compare and verify outputs are normalized; verify takes a list or {entries}', () => {
  const e = toEvalResult({
    ckpt: '/c',
    data: '/d',
    num_images: 8,
    accuracy: 0.5,
    loss: null,
    classes: ['a', 'b'],
    per_class: [{ class: 'a', precision: 1, recall: 0.5, support: 4 }],
    confusion: [
      [2, 2],
      [0, 4],
    ],
    skipped: [{ file: 'x.jpg', reason: 'truncated' }],
    evaluated_at: 5,
  });
  assert.deepEqual(e.confusion, [
    [2, 2],
    [0, 4],
  ]);
  assert.equal(e.per_class[0].recall, 0.5);
  const c = toCompareResult({
    tensors: [
      { name: 'conv1.weight', shape: [1], l2_diff: 0, rel_change: 0, frozen: true },
      { name: 'fc.weight', shape: [1], l2_diff: 0.3, rel_change: 0.1, frozen: false },
    ],
    only_in_a: [],
    only_in_b: ['x'],
    shape_mismatch: [],
  });
  assert.deepEqual(c.summary, { tensors: 2, changed: 1, unchanged: 1, frozen_max_l2: null });
  // the runner prints shape mismatches as objects; junk entries are dropped, not thrown on
  const m = toCompareResult({
    tensors: [],
    only_in_a: [],
    only_in_b: [],
    shape_mismatch: [{ name: 'head.weight', shape_a: [3, 512], shape_b: [2, 512] }, 7, { shape_a: [1] }],
  });
  assert.deepEqual(m.shape_mismatch, ['head.weight: [3,512] vs [2,512]']);
  const v = toVerifyEntries({
    entries: [
      { file: 'a', exists: true, bytes_ok: true, sha256_ok: true },
      { file: 'b', exists: true, bytes_ok: false, sha256_ok: false },
      { file: 'c', exists: false, bytes_ok: null, sha256_ok: null },
      { file: 'd', exists: true, bytes_ok: true, sha256_ok: false },
    ],
  });
  assert.deepEqual(
    v.map((x) => verifyProblem(x)),
    [
      undefined,
      'size differs from checkpoints.json (truncated?)',
      'file missing',
      'sha256 no longer matches checkpoints.json',
    ],
  );
  assert.equal(toVerifyEntries([{ file: 'a', exists: true }]).length, 1);
  // The runner's own shape, with its problem text preferred.
  const real = toVerifyEntries({
    run_dir: '/r',
    ok: false,
    checkpoints: [
      {
        file: 'a',
        exists: true,
        bytes_ok: false,
        sha256_ok: false,
        bytes: 5,
        best: false,
        problem: 'size 5 bytes, checkpoints.json says 9 (truncated or replaced)',
      },
    ],
  });
  assert.equal(verifyProblem(real[0]), 'size 5 bytes, checkpoints.json says 9 (truncated or replaced)');
  assert.throws(() => toVerifyEntries({ nope: 1 }), /verify printed an unexpected result/);
});

test('a class mismatch names the missing and extra classes', () => {
  const err = new RunnerError(
    'classes differ',
    2,
    { kind: 'bad_input', message: 'classes differ', missing: ['cat'], extra: ['dog', 'emu'] },
    undefined,
    '',
  );
  const m = classMismatch(err);
  assert.deepEqual(m && [m.missing, m.extra], [['cat'], ['dog', 'emu']]);
  assert.match(classMismatchText(m!), /missing class folder: cat; extra class folders: dog, emu/);
  assert.equal(classMismatch(new RunnerError('x', 2, { kind: 'bad_input' }, undefined, '')), undefined);
  assert.equal(classMismatch(new Error('x')), undefined);
});
