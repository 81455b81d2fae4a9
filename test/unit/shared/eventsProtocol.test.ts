import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  eventProblem,
  hasEventEnvelope,
  isKnownEvent,
  isRunEvent,
  runHealth,
  stepOverflows,
  stepSkippedUpdates,
  stepsCovered,
} from '../../../src/shared/eventsProtocol';

test('isRunEvent accepts a valid envelope, known type or not', () => {
  assert.ok(isRunEvent({ v: 1, seq: 1, t: 1700000000.5, type: 'step', loss: 0.5 }));
  assert.ok(isRunEvent({ v: 2, seq: 7, t: 1, type: 'from_the_future', extra: [1] }));
});

test('isRunEvent rejects what cannot be sequenced', () => {
  for (const bad of [
    null,
    'x',
    [1],
    {},
    { seq: 1, t: 1, type: 'step' }, // no v
    { v: 1, seq: 0, t: 1, type: 'step' }, // seq starts at 1
    { v: 1, seq: 1.5, t: 1, type: 'step' },
    { v: 1, seq: '1', t: 1, type: 'step' },
    { v: 1, seq: 1, t: '1', type: 'step' },
    { v: 1, seq: 1, t: 1, type: '' },
    { v: 1, seq: 1, t: 1 },
    { error: { message: 'no such run' } },
  ]) {
    assert.equal(isRunEvent(bad), false, JSON.stringify(bad));
  }
});

test('isKnownEvent tells protocol types from newer ones', () => {
  assert.ok(isKnownEvent({ v: 1, seq: 1, t: 1, type: 'run_finished' }));
  assert.ok(isKnownEvent({ v: 1, seq: 1, t: 1, type: 'lr_reduced' }));
  assert.equal(isKnownEvent({ v: 1, seq: 1, t: 1, type: 'from_the_future' }), false);
});

test('isRunEvent rejects a known event whose fields have the wrong types; missing fields are fine', () => {
  const env = { v: 1, seq: 3, t: 1 };
  for (const bad of [
    { ...env, type: 'run_started', spec: null },
    { ...env, type: 'run_started', spec: [1] },
    { ...env, type: 'run_started', classes: 'a,b' },
    { ...env, type: 'step', epoch: '2' },
    { ...env, type: 'step', epoch: { toString: 1 } },
    { ...env, type: 'step', loss: Infinity },
    { ...env, type: 'step', overflow: 'no' },
    { ...env, type: 'eval', val_acc: null },
    { ...env, type: 'eval', confusion: 5 },
    { ...env, type: 'eval', val_top5: '1.0' },
    { ...env, type: 'checkpoint', metrics: 5 },
    { ...env, type: 'device', devices: {} },
    { ...env, type: 'warning', message: 7 },
    { ...env, type: 'run_finished', status: 'exploded' },
    { ...env, type: 'run_finished', error: 'boom' },
    { ...env, type: 'run_finished', early_stop: 'epoch 3' },
    { ...env, type: 'eval', ema: 0.5 },
    { ...env, type: 'checkpoint', kind: 1 },
    { ...env, type: 'lr_reduced', lr: '0.001' },
    { ...env, type: 'lr_reduced', metric: null },
    { v: 1, seq: 1, t: Infinity, type: 'step' },
  ]) {
    assert.equal(isRunEvent(bad), false, JSON.stringify(bad));
    if (hasEventEnvelope(bad)) assert.ok(eventProblem(bad), JSON.stringify(bad));
  }
  for (const good of [
    { ...env, type: 'run_started' },
    { ...env, type: 'step', loss: null, loss_scale: null, img_per_s: null, epoch: 1 },
    { ...env, type: 'eval', val_loss: null, confusion: null },
    { ...env, type: 'eval', val_acc: 0.5, val_top5: 1 },
    { ...env, type: 'run_finished', status: 'failed', error: { kind: 'x', message: 'y' }, best: null, final: null },
    { ...env, type: 'from_the_future', spec: null, epoch: 'any' },
    // issue 19's knobs: the EMA eval beside the raw one, the EMA checkpoint, a plateau drop, an early stop
    { ...env, type: 'eval', val_acc: 0.5, ema: { val_loss: 1.2, val_acc: 0.55, per_class_acc: [0.5, 0.6] } },
    { ...env, type: 'eval', val_acc: 0.5, ema: null },
    { ...env, type: 'checkpoint', file: 'checkpoints/t-e1-s9-ema.ckpt', kind: 'ema', best: true },
    { ...env, type: 'lr_reduced', epoch: 2, step: 18, lr: 0.001, previous_lr: 0.01, metric: 'val_loss', best_epoch: 1 },
    {
      ...env,
      type: 'run_finished',
      status: 'completed',
      early_stop: { epoch: 3, message: 'val_loss did not improve' },
    },
  ]) {
    assert.ok(isRunEvent(good), JSON.stringify(good));
  }
});

test('runHealth: a verdict is read, checked; bad reasons are dropped and a bad verdict is none', () => {
  assert.deepEqual(runHealth({ verdict: 'healthy', reasons: [] }), { verdict: 'healthy', reasons: [] });
  assert.deepEqual(
    runHealth({
      verdict: 'problems',
      reasons: [
        { code: 'chance_level', message: 'm', fix: 'f', chance: 0.25 },
        { code: 1 },
        null,
        { code: 'x', message: 'no fix' },
      ],
    }),
    {
      verdict: 'problems',
      reasons: [
        { code: 'chance_level', message: 'm', fix: 'f', chance: 0.25 },
        { code: 'x', message: 'no fix', fix: '' },
      ],
    },
  );
  assert.equal(runHealth(null), undefined);
  assert.equal(runHealth({ verdict: 'great', reasons: [] }), undefined);
  assert.equal(runHealth({ verdict: 'problems', reasons: 'x' }), undefined);
  assert.deepEqual(runHealth({ verdict: 'problems', reasons: [5] }), { verdict: 'problems', reasons: [] });
  // a run_finished with a bad verdict is still an event: its end must not be lost
  assert.ok(
    isRunEvent({
      v: 1,
      seq: 3,
      t: 1,
      type: 'run_finished',
      status: 'completed',
      error: null,
      best: null,
      final: null,
      health: 5,
    }),
  );
});

test('a sink step event names its range and mean loss; a range that ends before it starts is refused', () => {
  const env = { v: 1, seq: 4, t: 1, type: 'step', step: 8, loss: 1.2 };
  assert.ok(isRunEvent({ ...env, first_step: 5, mean_loss: 1.3 }));
  assert.ok(isRunEvent({ ...env, first_step: 5, mean_loss: null }), 'every loss of the sink was NaN/Inf');
  assert.ok(isRunEvent({ ...env, first_step: 8 }), 'a range of one step');
  for (const bad of [
    { ...env, first_step: 9, mean_loss: 1 },
    { ...env, first_step: '5' },
    { ...env, first_step: 5, mean_loss: 'x' },
  ]) {
    assert.equal(isRunEvent(bad), false, JSON.stringify(bad));
    assert.match(eventProblem(bad as never) ?? '', /first_step|mean_loss/);
  }
});

test("a sink's overflows and skipped_updates are whole numbers within its range; the readers' counts use them", () => {
  const env = { v: 1, seq: 4, t: 1, type: 'step', step: 8, first_step: 5, loss: 1.2, overflow: false, skipped: false };
  assert.ok(isRunEvent({ ...env, overflows: 2, skipped_updates: 3 }));
  assert.ok(isRunEvent({ ...env, overflows: 4, skipped_updates: 4 }), 'every step of the 4');
  for (const bad of [
    { ...env, overflows: 5 },
    { ...env, overflows: -1 },
    { ...env, skipped_updates: 1.5 },
    { ...env, overflows: '2' },
    { ...env, first_step: undefined, overflows: 2 },
  ]) {
    assert.equal(isRunEvent(bad), false, JSON.stringify(bad));
    assert.match(eventProblem(bad as never) ?? '', /overflows|skipped_updates/);
  }
  assert.equal(stepOverflows({ ...env, overflows: 3 }), 3, 'a sink: all its steps, though its last step was fine');
  assert.equal(stepSkippedUpdates({ ...env, overflows: 3, skipped_updates: 3 }), 3);
  assert.equal(stepSkippedUpdates({ ...env, overflows: 3 }), 3, 'an overflow always skips its update');
  // One step, or an older runner's sink without the counts: its flags, once.
  assert.equal(stepOverflows({ ...env, overflow: true }), 1);
  assert.equal(stepSkippedUpdates({ ...env, overflow: false, skipped: true }), 1);
  assert.equal(stepOverflows({ ...env, first_step: undefined, overflow: true }), 1);
  assert.equal(stepsCovered(env), 4);
  assert.equal(stepsCovered({ step: 8 }), 1);
});
