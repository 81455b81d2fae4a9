// What a run's events tell the user (src/core/runs/notices.ts): the finish, lost and warning
// notices, and the per-run decisions the glue used to make (NaN loss once, overflow storms).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  BURST_S,
  finishNotice,
  rankWarnings,
  runnerErrorSentence,
  WarningBurst,
  warningBurstNotice,
  warningRank,
  lostNotice,
  nanLossNotice,
  OVERFLOW_STORM_STEPS,
  OverflowStorm,
  overflowStormNotice,
  RunNotices,
  streamStoppedNotice,
} from '../../../src/core/runs/notices';
import { formatSummary } from '../../../src/core/runs/progress';
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

test('notices: a run that early stopping ended says why, in the completed notice and the summary', () => {
  const early = {
    epoch: 3,
    metric: 'val_loss',
    best: 1.69,
    best_epoch: 1,
    patience: 2,
    min_delta: 0.001,
    message: 'val_loss did not improve by more than 0.001 for 2 epoch(s) (best 1.69 at epoch 1)',
  };
  const e = finished('completed', {
    early_stop: early,
    best: { file: 'checkpoints/t-e1-s9.ckpt', epoch: 1, step: 9, metrics: { val_acc: 0.5 } },
  });
  assert.equal(
    finishNotice('f', e).message,
    'Ascend run "f" completed early (val_loss did not improve by more than 0.001 for 2 epoch(s) (best 1.69 at epoch 1)), best val_acc 50.0%.',
  );
  assert.match(formatSummary(e), /\n {2}stopped early after epoch 3: val_loss did not improve/);
  // an early_stop of the wrong shape (a newer or broken runner) is left out, never shown as "undefined"
  const odd = finished('completed', { early_stop: { epoch: 'x' } as unknown as RunFinishedEvent['early_stop'] });
  assert.equal(finishNotice('f', odd).message, 'Ascend run "f" completed.');
  assert.doesNotMatch(formatSummary(odd), /early/);
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
  // Warnings are held for their burst, then told (or not) when it is flushed.
  assert.deepEqual(n.event(warning, false), []);
  assert.deepEqual(n.flush(false), []);
  assert.deepEqual(n.event(warning, true), []);
  assert.ok(n.holding);
  assert.deepEqual(n.flush(true), [
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

// ---- issue 17: the verdict, and warnings triaged --------------------------------------------------

const reason = (code: string, message: string, fix: string) => ({ code, message, fix });
const problems = {
  verdict: 'problems',
  reasons: [
    reason('loss_rose', 'The loss rose from 9 to 2000.', 'Lower train.lr.'),
    reason('chance_level', 'The best validation accuracy, 25.0%, is within 17.7% of chance.', 'Train longer.'),
  ],
};

test('a completed run with problems: amber, the first reason and its fix, "+N more" with Show All', () => {
  const n = finishNotice('f', finished('completed', { health: problems }));
  assert.equal(n.severity, 'warning');
  assert.equal(
    n.message,
    'Ascend run "f" completed with problems: The loss rose from 9 to 2000. — Lower train.lr. (+1 more)',
  );
  assert.deepEqual(n.actions, ['Show All', 'Open Dashboard']);
  assert.deepEqual(n.details, [
    'The loss rose from 9 to 2000. Fix: Lower train.lr.',
    'The best validation accuracy, 25.0%, is within 17.7% of chance. Fix: Train longer.',
  ]);
  const one = finishNotice(
    'f',
    finished('stopped', { health: { verdict: 'problems', reasons: [problems.reasons[1]] } }),
  );
  assert.match(one.message, /^Ascend run "f" stopped with problems: The best validation/);
  assert.deepEqual(one.actions, ['Open Dashboard'], 'one reason: nothing more to show');
});

test('a healthy run, an older runner (no health) and a malformed verdict keep the green wording', () => {
  const plain = finishNotice('f', finished('completed'));
  assert.equal(plain.severity, 'info');
  assert.equal(plain.message, 'Ascend run "f" completed.');
  assert.deepEqual(finishNotice('f', finished('completed', { health: { verdict: 'healthy', reasons: [] } })), plain);
  assert.deepEqual(finishNotice('f', finished('completed', { health: { verdict: 'bad' } })), plain);
  assert.deepEqual(finishNotice('f', finished('completed', { health: null })), plain);
});

test('a failed run says why, in a sentence with a fix for unsafe_file, disk_full and bad_run', () => {
  const err = (kind: string, message: string) => ({ kind, message, trace_tail: null });
  const disk = finishNotice(
    'f',
    finished('failed', { error: err('disk_full', 'the disk holding /r is full (ENOSPC)') }),
  );
  assert.equal(disk.severity, 'error');
  assert.match(disk.message, /disk holding the run is full .*Free some space on the target, then resume/);
  assert.match(
    runnerErrorSentence({ kind: 'unsafe_file', message: 'events.jsonl is a symlink' }) ?? '',
    /not safe.*symlink.*remove the link/,
  );
  assert.match(
    runnerErrorSentence({ kind: 'bad_run', message: 'status.json is a FIFO' }) ?? '',
    /cannot be used: status.json is a FIFO.*other runs are not affected/,
  );
  assert.equal(runnerErrorSentence({ kind: 'RuntimeError', message: 'x' }), undefined);
  const other = finishNotice('f', finished('failed', { error: err('RuntimeError', 'boom') }));
  assert.equal(other.message, 'Ascend run "f" failed: RuntimeError: boom');
});

const warn = (seq: number, t: number, code: string): RunEvent =>
  ({ ...env(seq, t), type: 'warning', code, message: `${code} message`, details: {} }) as RunEvent;

test('warnings rank by code: what makes the run learn nothing first, adjusted defaults last, unknown between', () => {
  const codes = ['amp_auto_cpu', 'workers_above_cores', 'from_the_future', 'frozen_random_backbone', 'images_skipped'];
  assert.deepEqual(
    rankWarnings(codes.map((code) => ({ code }))).map((w) => w.code),
    ['frozen_random_backbone', 'images_skipped', 'from_the_future', 'workers_above_cores', 'amp_auto_cpu'],
  );
  assert.ok(warningRank('nonfinite_loss') < warningRank('sink_unavailable'));
  assert.ok(warningRank('overflow_storm') < warningRank('no_checkpoint_interval'));
});

test('four set-up warnings before the first step make ONE notice: the serious one first, +3 more, Show All lists all', () => {
  const n = new RunNotices('f');
  const ws = [warn(2, 100, 'amp_auto_cpu'), warn(3, 100, 'sink_unavailable'), warn(4, 100, 'workers_above_cores')];
  for (const w of ws) assert.deepEqual(n.event(w, true), []);
  // a later set-up warning (feature cache) still joins: no step yet
  assert.deepEqual(n.event(warn(5, 130, 'frozen_random_backbone'), true), []);
  const [notice, ...rest] = n.event(step(1), true);
  assert.deepEqual(rest, []);
  assert.equal(notice.message, 'Ascend run "f": frozen_random_backbone message [frozen_random_backbone] (+3 more)');
  assert.deepEqual(notice.actions, ['Show All']);
  assert.deepEqual(notice.details, [
    '[frozen_random_backbone] frozen_random_backbone message',
    '[workers_above_cores] workers_above_cores message',
    // a known code is worded by the extension (runnerCodes.ts); the others lack their parameters here
    '[amp_auto_cpu] amp.level auto had no CPU mapping in this MindSpore; the run used O0 (fp32).',
    '[sink_unavailable] sink_unavailable message',
  ]);
  assert.equal(n.holding, false);
});

test('after the first step, warnings within a second are one burst; a later one closes it and opens the next', () => {
  const b = new WarningBurst();
  assert.deepEqual(b.step(), []);
  assert.deepEqual(b.add(warn(10, 200, 'npu_low_hbm') as never), []);
  assert.deepEqual(b.add(warn(11, 200.8, 'telemetry_unavailable') as never), []);
  const closed = b.add(warn(12, 202, 'images_skipped') as never);
  assert.deepEqual(
    closed.map((w) => w.code),
    ['npu_low_hbm', 'telemetry_unavailable'],
  );
  assert.ok(b.open);
  assert.deepEqual(
    b.take().map((w) => w.code),
    ['images_skipped'],
  );
  assert.equal(BURST_S, 1);
  // a single warning is told as it is, without "+0 more"
  assert.deepEqual(warningBurstNotice('f', [warn(3, 1, 'npu_busy') as never]), {
    severity: 'warning',
    message: 'Ascend run "f": npu_busy message [npu_busy]',
    actions: [],
  });
});

test('the run end flushes held warnings before the finish notice', () => {
  const n = new RunNotices('f');
  n.event(warn(2, 100, 'images_skipped'), true);
  const out = n.event(finished('completed'), true);
  assert.deepEqual(
    out.map((x) => x.message),
    ['Ascend run "f": images_skipped message [images_skipped]', 'Ascend run "f" completed.'],
  );
});

test('an overflow storm inside sinks: whole sinks of overflows add their steps, a clean step inside breaks the streak', () => {
  const s = new OverflowStorm();
  assert.equal(s.step(true, 10, 10), false);
  assert.equal(s.step(true, 10, 10), true, '20 overflows in a row over two sinks of 10');
  const t = new OverflowStorm();
  assert.equal(t.step(true, 10, 10), false);
  assert.equal(t.step(true, 9, 10), false, 'one clean step in the sink: the streak restarts at its last step');
  assert.equal(t.step(true, 10, 10), false, '11 in a row, not 20');
});
