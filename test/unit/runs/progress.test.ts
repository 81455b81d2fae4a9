import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  formatCheckpoint,
  formatEval,
  formatSummary,
  formatWarning,
  ProgressTracker,
} from '../../../src/core/runs/progress';
import type {
  CheckpointEvent,
  EvalEvent,
  RunFinishedEvent,
  RunStartedEvent,
  StepEvent,
} from '../../../src/shared/eventsProtocol';

const started: RunStartedEvent = {
  v: 1,
  seq: 1,
  t: 1000,
  type: 'run_started',
  run_id: 'r1',
  spec: {},
  classes: ['cat', 'dog'],
  num_train: 640,
  num_val: 64,
  steps_per_epoch: 20,
  total_steps: 40,
  versions: {},
  device: 'CPU',
};

function step(n: number, loss: number, extra: Partial<StepEvent> = {}): StepEvent {
  return {
    v: 1,
    seq: n + 1,
    t: 1000 + n,
    type: 'step',
    epoch: Math.ceil(n / 20),
    step: n,
    loss,
    lr: 0.01,
    loss_scale: 65536,
    overflow: false,
    step_ms: 38.8,
    img_per_s: 412.3,
    ...extra,
  };
}

test('the progress line shows position, loss and its epoch average, overflows, lr, scale and speed', () => {
  const p = new ProgressTracker();
  assert.equal(p.line(), 'waiting for the first step');
  p.apply(started);
  p.apply(step(1, 0.7069, { overflow: true }));
  p.apply(step(2, 0.7, { overflow: true }));
  p.apply(step(3, 0.6931, { overflow: true }));
  assert.equal(p.line(), 'epoch 1/2 step 3/40 loss 0.6931 (avg 0.70) overflow 3 lr 0.01 scale 65536 412 img/s');
});

test('the average and overflow count restart with each epoch; no scale without loss scaling', () => {
  const p = new ProgressTracker();
  p.apply(started);
  p.apply(step(20, 2, { overflow: true }));
  p.apply(step(21, 0.5, { loss_scale: null, lr: 0.00123456 }));
  assert.equal(p.line(), 'epoch 2/2 step 21/40 loss 0.5000 (avg 0.50) lr 0.001235 412 img/s');
  assert.equal(p.overflowTotal, 1);
});

test('unknown events are ignored', () => {
  const p = new ProgressTracker();
  p.apply({ v: 1, seq: 1, t: 1, type: 'from_the_future', epoch: 'x' });
  assert.equal(p.line(), 'waiting for the first step');
});

test('eval, checkpoint and warning lines', () => {
  const ev: EvalEvent = {
    v: 1,
    seq: 22,
    t: 1,
    type: 'eval',
    epoch: 1,
    step: 20,
    val_loss: 0.3125,
    val_acc: 0.875,
    per_class_acc: [0.75, 1],
    confusion: [
      [3, 1],
      [0, 4],
    ],
  };
  assert.equal(formatEval(ev), 'eval epoch 1: val_acc 0.875 val_loss 0.31');
  const ck: CheckpointEvent = {
    v: 1,
    seq: 23,
    t: 1,
    type: 'checkpoint',
    file: 'checkpoints/demo-1_20.ckpt',
    epoch: 1,
    step: 20,
    metrics: { val_acc: 0.875, val_loss: null },
    bytes: 44_700_000,
    sha256: 'ab',
    best: true,
  };
  assert.equal(formatCheckpoint(ck), 'checkpoint epoch 1 step 20: demo-1_20.ckpt 44.7 MB val_acc 0.875 (best)');
  assert.equal(
    formatWarning({
      v: 1,
      seq: 2,
      t: 1,
      type: 'warning',
      code: 'no_sink',
      message: 'CPU does not sink',
      details: null,
    }),
    'warning no_sink: CPU does not sink',
  );
});

test('the summary says how it ended, how long, final and best metrics, and any error', () => {
  const p = new ProgressTracker();
  p.apply(started);
  p.apply(step(40, 0.2, { overflow: true }));
  const done: RunFinishedEvent = {
    v: 1,
    seq: 50,
    t: 1083,
    type: 'run_finished',
    status: 'completed',
    error: null,
    best: { file: '/runs/r1/checkpoints/demo-2_40.ckpt', epoch: 2, step: 40, metrics: { val_acc: 0.9375 } },
    final: { val_acc: 0.9375, train_loss: 0.21 },
  };
  assert.equal(
    formatSummary(done, p),
    [
      'run completed in 1m 23s',
      '  40 steps, 1 skipped for overflow',
      '  final: val_acc 0.9375 train_loss 0.21',
      '  best: demo-2_40.ckpt (epoch 2 step 40, val_acc 0.9375)',
    ].join('\n'),
  );
  const failed: RunFinishedEvent = {
    ...done,
    status: 'failed',
    best: null,
    final: null,
    error: { kind: 'oom', message: 'Out of Memory', trace_tail: null },
  };
  assert.equal(formatSummary(failed), 'run failed\n  error: oom: Out of Memory');
});
