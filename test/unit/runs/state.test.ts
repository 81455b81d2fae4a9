import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyEvent, applySignal, describe, etaSeconds, initialView, type RunView } from '../../../src/core/runs/state';
import type { RunEvent } from '../../../src/shared/eventsProtocol';

let seq = 0;
const ev = (type: string, t: number, fields: Record<string, unknown> = {}): RunEvent =>
  ({ v: 1, seq: ++seq, t, type, ...fields }) as RunEvent;
const started = (t: number) =>
  ev('run_started', t, { total_steps: 20, steps_per_epoch: 10, spec: { train: { epochs: 2 } } });
const step = (t: number, n: number, extra: Record<string, unknown> = {}) =>
  ev('step', t, {
    epoch: Math.ceil(n / 10),
    step: n,
    loss: 1 / n,
    img_per_s: 50,
    loss_scale: 1024,
    overflow: false,
    ...extra,
  });
const feed = (events: RunEvent[], view: RunView = initialView()) => events.reduce(applyEvent, view);

test('launching becomes running at run_started, then finished with its status', () => {
  seq = 0;
  let v = initialView();
  assert.equal(v.phase, 'launching');
  v = feed([started(100), step(101, 1), step(102, 2)], v);
  assert.equal(v.phase, 'running');
  assert.equal(v.step, 2);
  assert.equal(v.totalSteps, 20);
  v = feed([ev('run_finished', 110, { status: 'stopped', error: null, best: null, final: null })], v);
  assert.equal(v.phase, 'finished');
  assert.equal(v.status, 'stopped');
  assert.match(describe(v), /stopped/);
});

test('a download during set-up keeps the run starting and shows its bytes until run_started', () => {
  seq = 0;
  const dl = (t: number, done: number, total: number | null) =>
    ev('setup', t, { stage: 'download', source: 'mindcv:resnet50', done, total });
  let v = feed([dl(100, 0, 102_000_000), dl(101, 40_000_000, 102_000_000)]);
  assert.equal(v.phase, 'launching', 'set-up is not the run yet');
  assert.deepEqual(v.download, { source: 'mindcv:resnet50', done: 40_000_000, total: 102_000_000 });
  v = feed([started(105)], v);
  assert.equal(v.phase, 'running');
  assert.equal(v.download, undefined);
  // A stage this build does not know changes nothing but the phase.
  assert.equal(feed([ev('setup', 106, { stage: 'compile' })]).download, undefined);
});

test('an event already seen changes nothing (a reconnect resends nothing twice)', () => {
  seq = 0;
  const start = started(100);
  const first = step(101, 1, { overflow: true });
  const v = feed([start, first]);
  const again = applyEvent(v, first);
  assert.equal(again, v);
  assert.equal(v.overflows, 1);
});

test('a dropped stream is reconnecting until the next event or reattach; lost is final until run_started', () => {
  seq = 0;
  let v = feed([started(100), step(101, 1)]);
  v = applySignal(v, { kind: 'dropped' });
  assert.equal(v.phase, 'reconnecting');
  assert.match(describe(v), /reconnecting/);
  v = applyEvent(v, step(102, 2));
  assert.equal(v.phase, 'running');
  v = applySignal(v, { kind: 'dropped' });
  v = applySignal(v, { kind: 'reattached' });
  assert.equal(v.phase, 'running');
  v = applySignal(v, { kind: 'lost' });
  assert.equal(v.phase, 'lost');
  assert.equal(applySignal(v, { kind: 'dropped' }).phase, 'lost');
  // resumed from a checkpoint in the same run directory: live again
  v = applyEvent(v, started(500));
  assert.equal(v.phase, 'running');
});

test('a finished run ignores transport noise, but a resume (run_started) reopens it', () => {
  seq = 0;
  let v = feed([
    started(100),
    step(101, 1),
    ev('run_finished', 102, {
      status: 'failed',
      error: { kind: 'x', message: 'boom', trace_tail: null },
      best: null,
      final: null,
    }),
  ]);
  assert.equal(applySignal(v, { kind: 'lost' }).phase, 'finished');
  assert.equal(v.error?.message, 'boom');
  v = applyEvent(v, started(200));
  assert.equal(v.phase, 'running');
  assert.equal(v.status, undefined);
  assert.equal(v.error, undefined);
});

test('ETA follows the smoothed step time and ignores the downtime of a resume', () => {
  seq = 0;
  let v = feed([started(100), step(100, 1), step(102, 2), step(104, 3)]);
  assert.equal(v.secPerStep, 2);
  assert.equal(etaSeconds(v), 17 * 2);
  v = feed([started(1000), step(1000, 4), step(1002, 5)], v);
  assert.equal(v.secPerStep, 2, 'the 896 s gap across the resume is not a step');
  assert.equal(etaSeconds(initialView()), undefined);
});

test('description: epoch of epochs, loss and best accuracy', () => {
  seq = 0;
  const v = feed([
    started(100),
    step(101, 12),
    ev('eval', 102, { epoch: 1, step: 10, val_acc: 0.9133, val_loss: 0.3, per_class_acc: [], confusion: [] }),
    ev('eval', 103, { epoch: 2, step: 20, val_acc: 0.8, val_loss: 0.3, per_class_acc: [], confusion: [] }),
  ]);
  assert.equal(describe(v), 'epoch 2/2 · loss 0.0833 · best 91.3%');
});

test('unknown event types advance lastSeq and nothing else', () => {
  seq = 0;
  const v = feed([started(100), ev('something_new', 101, { x: 1 })]);
  assert.equal(v.lastSeq, 2);
  assert.equal(v.phase, 'running');
});

test('wrong types that reach the state do not throw: spec null, epoch not a number', () => {
  const started = { v: 1, seq: 1, t: 1, type: 'run_started', spec: null } as unknown as RunEvent;
  const v = applyEvent(initialView(), started);
  assert.equal(v.totalEpochs, undefined);
  const odd = {
    ...v,
    epoch: { toString: 1, valueOf: 1 },
    loss: '0.5',
    bestValAcc: 'x',
    totalEpochs: [],
  } as unknown as RunView;
  assert.equal(describe(odd), '');
  const nested = { v: 1, seq: 2, t: 2, type: 'run_started', spec: { train: null } } as unknown as RunEvent;
  assert.equal(applyEvent(v, nested).totalEpochs, undefined);
});
