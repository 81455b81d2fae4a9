import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  canDelete,
  describeListed,
  runDescription,
  runTooltip,
  formatDuration,
  isLive,
  runContextValue,
  shownState,
  stateIcon,
  statusBarText,
} from '../../../src/core/runs/presentation';
import { applyEvent, applySignal, initialView } from '../../../src/core/runs/state';
import type { RunFinishedEvent, RunEvent } from '../../../src/shared/eventsProtocol';

const env = (seq: number, t: number) => ({ v: 1, seq, t });
const started: RunEvent = {
  ...env(1, 100),
  type: 'run_started',
  run_id: 'r',
  spec: { train: { epochs: 10 } },
  classes: ['a', 'b'],
  num_train: 8,
  num_val: 2,
  steps_per_epoch: 170,
  total_steps: 1700,
  versions: {},
  device: {},
};
const step = (seq: number, t: number, n: number): RunEvent => ({
  ...env(seq, t),
  type: 'step',
  epoch: 2,
  step: n,
  loss: 0.41234,
  lr: 0.01,
  loss_scale: 1024,
  overflow: false,
  step_ms: 40,
  img_per_s: 812.4,
});
const finished = (status: RunFinishedEvent['status'], extra: Partial<RunFinishedEvent> = {}): RunFinishedEvent => ({
  ...env(9, 200),
  type: 'run_finished',
  status,
  error: null,
  best: null,
  final: null,
  ...extra,
});

test('the shown state: a live stream phase wins over the index; finished takes the run status', () => {
  assert.equal(shownState({ state: 'running' }), 'running');
  let v = initialView();
  assert.equal(shownState({ state: 'running' }, v), 'launching');
  v = applyEvent(v, started);
  assert.equal(shownState({ state: 'lost' }, v), 'running');
  assert.equal(shownState({ state: 'running' }, applySignal(v, { kind: 'dropped' })), 'reconnecting');
  assert.equal(shownState({ state: 'running' }, applyEvent(v, finished('stopped'))), 'stopped');
  assert.equal(shownState({ state: 'running' }, applySignal(v, { kind: 'lost' })), 'lost');
});

test('live and deletable states, context values and icons', () => {
  assert.ok(isLive('reconnecting') && !isLive('completed'));
  assert.ok(!canDelete('running') && !canDelete('launching') && canDelete('failed') && canDelete('lost'));
  assert.equal(runContextValue('running'), 'run.running.live');
  assert.equal(runContextValue('completed'), 'run.completed.done');
  assert.equal(stateIcon('failed').id, 'error');
  assert.equal(stateIcon('running').id, 'sync~spin');
});

test('status bar: epoch, step, loss, throughput and ETA at the smoothed pace', () => {
  let v = applyEvent(initialView(), started);
  v = applyEvent(v, step(2, 110, 339));
  v = applyEvent(v, step(3, 110.5, 340)); // 0.5 s per step, 1360 steps left
  assert.equal(
    statusBarText('flowers', v),
    '$(sync~spin) flowers 2/10 · 340/1700 · loss 0.412 · 812 img/s · ETA 11m 20s',
  );
  assert.match(
    statusBarText('flowers', applySignal(v, { kind: 'dropped' })),
    /^\$\(debug-disconnect\) .* reconnecting…$/,
  );
  assert.equal(statusBarText('x', initialView()), '$(loading~spin) x · starting…');
  const setup = (done: number, total: number | null): RunEvent =>
    ({ v: 1, seq: 1, t: 1, type: 'setup', stage: 'download', source: 'mindcv:resnet50', done, total }) as RunEvent;
  assert.equal(
    statusBarText('x', applyEvent(initialView(), setup(41_000_000, 100_000_000))),
    '$(loading~spin) x · downloading mindcv:resnet50: 41%',
  );
  assert.equal(
    statusBarText('x', applyEvent(initialView(), setup(12_345_678, null))),
    '$(loading~spin) x · downloading mindcv:resnet50: 12.3 MB',
  );
  assert.equal(formatDuration(3725), '1h 02m');
  assert.equal(formatDuration(12), '12s');
});

test('a listed run (ls) is described like a streamed one', () => {
  const base = { run_id: 'r', run_dir: '/r', started_at: 1 };
  // `best` is the best checkpoint's manifest entry, as `ls` prints it (docs/protocol.md, section 4).
  const best = { file: 'checkpoints/x-e1-s5.ckpt', epoch: 1, step: 5, metrics: { loss: 1.54, val_acc: 0.25 } };
  assert.equal(
    describeListed({ ...base, state: 'stopped', epochs: 20, epoch: 3, step: 11, loss: 1.425681471824646, best }),
    'epoch 3/20 · loss 1.43 · best 25.0% · stopped',
  );
  assert.equal(
    describeListed({ ...base, state: 'completed', epoch: 2, loss: 0.5, best: null }),
    'epoch 2 · loss 0.500',
  );
  assert.equal(
    describeListed({ ...base, state: 'completed', epochs: 2, epoch: 2, loss: 0.5, best: { metrics: { loss: 0.5 } } }),
    'epoch 2/2 · loss 0.500',
    'no val_acc: no best',
  );
  assert.equal(describeListed({ ...base, state: 'lost', epoch: null, loss: null }), 'lost');
  assert.equal(describeListed({ ...base, state: 'running' }), '');
});

test("a multi-node run's tooltip names each other node and its run directory", () => {
  const rec = {
    targetId: 'ssh:npu-a',
    runId: 'r2',
    runDir: '/runs/r2',
    name: 'two',
    state: 'completed' as const,
    startedAt: 0,
    lastSeq: 0,
  };
  assert.deepEqual(
    runTooltip({ ...rec, nodes: [{ targetId: 'ssh:npu-b', runDir: '/scratch/r2' }] }, 'npu-a', 'completed').split('\n'),
    ['two', 'r2 on npu-a', 'state: completed', '/runs/r2', 'node 1: npu-b /scratch/r2'],
  );
  assert.ok(!runTooltip(rec, 'npu-a', 'completed').includes('node 1'));
});

test('a resumed run says what it continues from, in its description and tooltip', () => {
  assert.equal(
    runDescription('epoch 3/3 · loss 40.4', { resumedFrom: 'e2e-ck-e1-s4.ckpt' }),
    'epoch 3/3 · loss 40.4 · resumed from e2e-ck-e1-s4',
  );
  assert.equal(runDescription('epoch 3/3', {}), 'epoch 3/3');
  const rec = {
    targetId: 'local',
    runId: 'r3',
    runDir: '/runs/r3',
    name: 'ck',
    state: 'completed' as const,
    startedAt: 0,
    lastSeq: 0,
    resumedFrom: 'ck-e1-s4.ckpt',
  };
  assert.ok(runTooltip(rec, 'This machine', 'completed').split('\n').includes('resumed from ck-e1-s4.ckpt'));
});
