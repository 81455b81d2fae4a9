import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isHostMessage, validateUiMessage } from '../../../src/shared/checkpointsProtocol';

const files = new Set(['checkpoints/a-e1-s3.ckpt', 'checkpoints/a-e2-s6.ckpt']);
const [A, B] = [...files];
const ok = (raw: unknown) => {
  const v = validateUiMessage(raw, files);
  assert.ok(v.ok, `refused: ${JSON.stringify(raw)} -> ${'error' in v ? v.error : ''}`);
  return v.message;
};
const refused = (raw: unknown, re: RegExp) => {
  const v = validateUiMessage(raw, files);
  assert.equal(v.ok, false, `accepted: ${JSON.stringify(raw)}`);
  if (!v.ok) assert.match(v.error, re);
};

test('well-formed messages pass through as typed messages, extra fields dropped', () => {
  assert.deepEqual(ok({ type: 'ready' }), { type: 'ready' });
  assert.deepEqual(ok({ type: 'select', file: A, extra: '$(rm -rf /)' }), { type: 'select', file: A });
  assert.deepEqual(ok({ type: 'evaluate', file: A, data: 'pick' }), { type: 'evaluate', file: A, data: 'pick' });
  assert.deepEqual(ok({ type: 'export', file: B, format: 'onnx' }), { type: 'export', file: B, format: 'onnx' });
  assert.deepEqual(ok({ type: 'compare', a: A, b: B }), { type: 'compare', a: A, b: B });
  assert.deepEqual(ok({ type: 'action', action: 'download', file: B }), {
    type: 'action',
    action: 'download',
    file: B,
  });
  assert.deepEqual(ok({ type: 'prune', keepNewest: 2 }), { type: 'prune', keepNewest: 2 });
});

test('a file the host did not list is refused: no path reaches the target from the webview', () => {
  refused({ type: 'select', file: '/etc/passwd' }, /does not list/);
  refused({ type: 'action', action: 'delete', file: 'checkpoints/../../x' }, /does not list/);
  refused({ type: 'compare', a: A, b: '/home/u/other.ckpt' }, /"b".*does not list/);
  refused({ type: 'export', file: 42, format: 'onnx' }, /"file" must be/);
});

test('bad fields are named with what would be accepted', () => {
  refused({ type: 'export', file: A, format: 'tflite' }, /"format" must be "mindir" or "onnx"/);
  refused({ type: 'evaluate', file: A, data: '/tmp/x' }, /"data" must be "val" or "pick"/);
  refused({ type: 'action', action: 'shell', file: A }, /"action" must be one of resume, fineTune/);
  refused({ type: 'compare', a: A, b: A }, /two different/);
  for (const n of [0, -1, 1.5, '3', 1e9]) refused({ type: 'prune', keepNewest: n }, /keepNewest/);
  refused({ type: 'nope' }, /unknown message type/);
  refused(null, /not an object/);
  refused([], /not an object/);
  refused('ready', /not an object/);
});

test('the UI accepts only state snapshots', () => {
  assert.equal(isHostMessage({ type: 'state', state: { rows: [] } }), true);
  assert.equal(isHostMessage({ type: 'state', state: {} }), false);
  assert.equal(isHostMessage({ type: 'other' }), false);
  assert.equal(isHostMessage(null), false);
});

test('gallery messages: a cell by class indices, the mistakes, or a comparison by predictions of two listed checkpoints', () => {
  assert.deepEqual(ok({ type: 'gallery', file: A, what: { kind: 'cell', row: 2, col: 0, x: 1 } }), {
    type: 'gallery',
    file: A,
    what: { kind: 'cell', row: 2, col: 0 },
  });
  assert.deepEqual(ok({ type: 'gallery', file: B, what: { kind: 'mistakes' } }), {
    type: 'gallery',
    file: B,
    what: { kind: 'mistakes' },
  });
  assert.deepEqual(ok({ type: 'closeGallery' }), { type: 'closeGallery' });
  assert.deepEqual(ok({ type: 'comparePredictions', a: A, b: B }), { type: 'comparePredictions', a: A, b: B });
  refused({ type: 'gallery', file: A, what: { kind: 'cell', row: -1, col: 0 } }, /class indices/);
  refused({ type: 'gallery', file: A, what: { kind: 'cell', row: 1.5, col: 0 } }, /class indices/);
  refused({ type: 'gallery', file: A, what: { kind: 'files', files: ['/etc/passwd'] } }, /"what" must be/);
  refused({ type: 'gallery', file: A }, /"what" must be/);
  refused({ type: 'gallery', file: '/x.ckpt', what: { kind: 'mistakes' } }, /does not list/);
  refused({ type: 'comparePredictions', a: A, b: A }, /two different/);
});
