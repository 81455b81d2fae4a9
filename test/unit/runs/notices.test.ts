// What a run's events tell the user (src/core/runs/notices.ts): the finish, lost and warning
// notices, and the per-run decisions the glue used to make (NaN loss once, overflow storms).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  finishNotice,
  lostNotice,
  nanLossNotice,
  OVERFLOW_STORM_STEPS,
  OverflowStorm,
  overflowStormNotice,
  RunNotices,
  streamStoppedNotice,
} from '../../../src/core/runs/notices';
import type { RunEvent, RunFinishedEvent } from '../../../src/shared/eventsProtocol';

const env = (seq: number, t: number) => ({ v: 1, seq, t });
const finished = (status: RunFinishedEvent['status'], extra: Partial<RunFinishedEvent> = {}): RunFinishedEvent => ({
  ...env(9, 200),
  type: 'run_finished',
  status,
  error: null,
  best: null,
  final: null,
  ...extra,
});
const step = (n: number, extra: { loss?: number | null; overflow?: boolean } = {}): RunEvent => ({
  ...env(n + 1, 100 + n),
  type: 'step',
  epoch: 1,
  step: n,
  loss: 0.5,
  lr: 0.01,
  loss_scale: 1024,
  overflow: false,
  step_ms: 40,
  img_per_s: 800,
  ...extra,
});
const warning: RunEvent = {
  ...env(3, 101),
  type: 'warning',
  code: 'amp_fallback',
  message: 'O2 is not supported here; using O0',
  details: null,
};

test('notices: completed with the best accuracy and actions, failed with the error and its fix', () => {
  const ok = finishNotice(
    'f',
    finished('completed', { best: { file: 'c', epoch: 1, step: 5, metrics: { val_acc: 0.913 } } }),
  );
  assert.deepEqual(ok, {
    severity: 'info',
    message: 'Ascend run "f" completed, best val_acc 91.3%.',
    actions: ['Open Dashboard', 'Show Checkpoints'],
  });
  const bad = finishNotice(
    'f',
    finished('failed', {
      error: {
        kind: 'bad_input',
        message: 'found 1 class folder(s)',
        fix: 'put one sub-folder per class',
        trace_tail: null,
      },
    }),
  );
  assert.equal(bad.severity, 'error');
  assert.equal(
    bad.message,
    'Ascend run "f" failed: bad_input: found 1 class folder(s) (fix: put one sub-folder per class)',
  );
  assert.deepEqual(bad.actions, ['Show Console']);
  assert.equal(finishNotice('f', finished('stopped')).message, 'Ascend run "f" stopped.');
});

test('an overflow storm is reported once per streak', () => {
  const s = new OverflowStorm();
  const hits = [];
  for (let i = 0; i < OVERFLOW_STORM_STEPS * 2; i++) hits.push(s.step(true));
  assert.equal(hits.filter(Boolean).length, 1);
  assert.equal(hits.indexOf(true), OVERFLOW_STORM_STEPS - 1);
  s.step(false);
  for (let i = 0; i < OVERFLOW_STORM_STEPS; i++) if (s.step(true)) hits.push('again');
  assert.ok(hits.includes('again'));
});

test('a lost run and a stopped stream: errors and warnings with what to do next', () => {
  assert.deepEqual(lostNotice('f'), {
    severity: 'error',
    message: 'Ascend run "f" was lost: its training process is gone without finishing.',
    actions: ['Show Console'],
  });
  assert.deepEqual(streamStoppedNotice('f', 'ssh: connection refused'), {
    severity: 'warning',
    message: 'Stopped following Ascend run "f": ssh: connection refused',
    actions: ['Reattach'],
  });
});

test('a NaN or Inf loss is told once per attach, with the step and the console', () => {
  const n = new RunNotices('f');
  assert.deepEqual(n.event(step(1), false), []);
  const first = n.event(step(2, { loss: null }), false);
  assert.deepEqual(first, [nanLossNotice('f', 2)]);
  assert.deepEqual(first[0], {
    severity: 'warning',
    message: 'Ascend run "f": the loss is NaN or Inf at step 2; the update was skipped.',
    actions: ['Show Console'],
  });
  assert.deepEqual(n.event(step(3, { loss: null }), true), [], 'not again for a later NaN');
  assert.deepEqual(new RunNotices('f').event(step(3, { loss: null }), true).length, 1, 'a new attach tells again');
});

test('an overflow storm is told once per streak, only with notifyWarnings on; the streak counts either way', () => {
  const on = new RunNotices('f');
  const told = [];
  for (let i = 1; i <= OVERFLOW_STORM_STEPS * 2; i++) told.push(...on.event(step(i, { overflow: true }), true));
  assert.deepEqual(told, [overflowStormNotice('f', OVERFLOW_STORM_STEPS)]);
  assert.equal(told[0].severity, 'warning');
  assert.equal(
    told[0].message,
    `Ascend run "f": ${OVERFLOW_STORM_STEPS} loss-scale overflows in a row (step ${OVERFLOW_STORM_STEPS}); fp16 may not hold these gradients (try amp.level O0 or a lower learning rate).`,
  );
  assert.deepEqual(told[0].actions, []);

  const off = new RunNotices('f');
  for (let i = 1; i <= OVERFLOW_STORM_STEPS; i++) assert.deepEqual(off.event(step(i, { overflow: true }), false), []);
  assert.deepEqual(
    off.event(step(OVERFLOW_STORM_STEPS + 1, { overflow: true }), true),
    [],
    'the streak that peaked while off is not told late',
  );
  off.event(step(OVERFLOW_STORM_STEPS + 2), true); // a clean step ends the streak
  const next = [];
  for (let i = 1; i <= OVERFLOW_STORM_STEPS; i++) next.push(...off.event(step(100 + i, { overflow: true }), true));
  assert.equal(next.length, 1, 'a new streak is told');
});

test('a step with a NaN loss in an overflow storm gives both notices, the NaN first', () => {
  const n = new RunNotices('f');
  for (let i = 1; i < OVERFLOW_STORM_STEPS; i++) n.event(step(i, { overflow: true }), true);
  assert.deepEqual(n.event(step(OVERFLOW_STORM_STEPS, { overflow: true, loss: null }), true), [
    nanLossNotice('f', OVERFLOW_STORM_STEPS),
    overflowStormNotice('f', OVERFLOW_STORM_STEPS),
  ]);
});

test('the finish is always told; runner warnings only with notifyWarnings on; other events never', () => {
  const n = new RunNotices('f');
  assert.deepEqual(n.event(finished('completed'), false), [finishNotice('f', finished('completed'))]);
  assert.deepEqual(n.event(warning, false), []);
  assert.deepEqual(n.event(warning, true), [
    { severity: 'warning', message: 'Ascend run "f": O2 is not supported here; using O0 [amp_fallback]', actions: [] },
  ]);
  assert.deepEqual(
    n.event({ ...env(4, 102), type: 'epoch_end', epoch: 1, train_loss: 0.5, overflow_count: 30, final: null }, true),
    [],
  );
  assert.deepEqual(
    n.event({ ...env(5, 103), type: 'from_a_newer_runner' } as unknown as RunEvent, true),
    [],
    'unknown events are ignored',
  );
});
