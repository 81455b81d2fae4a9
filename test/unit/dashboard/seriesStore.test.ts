// The series store (columns from events, seq de-duplication, resume) and the downsampler (extremes
// of every series and every overflow kept, rows aligned on real steps, refinement on zoom).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { selectRows } from '../../../src/core/dashboard/downsample';
import { RunSeriesStore, STEP_SERIES } from '../../../src/core/dashboard/seriesStore';
import { applyEvent, initialView } from '../../../src/core/runs/state';
import type { RunEvent } from '../../../src/shared/eventsProtocol';
import { EventMaker, recorded } from '../fixtures/dashboard/events';

const newStore = () => new RunSeriesStore('k', { name: 'burst', target: 'This machine' });

test('a recorded run becomes aligned columns, header and notices', () => {
  const s = newStore();
  s.ingest(recorded('amp-startup-burst'));
  const all = s.stepRange(0, s.steps.length);
  assert.equal(all.steps.length, 36);
  assert.deepEqual(all.steps.slice(0, 3), [1, 2, 3]);
  for (const col of Object.values(all)) assert.equal(col.length, 36);
  assert.deepEqual(all.overflow.slice(0, 10), [1, 1, 1, 1, 1, 1, 1, 0, 1, 0]);
  assert.equal(all.lossScale[0], 8388608);
  assert.ok(all.dataMs.every((v) => typeof v === 'number'));
  const ev = s.evalBlock();
  assert.deepEqual(ev.steps, [9, 18, 27, 36]);
  assert.deepEqual(ev.epochs, [1, 2, 3, 4]);
  assert.equal(ev.perClassAcc[0].length, 4);
  const h = s.header();
  assert.equal(h.name, 'burst');
  assert.equal(h.phase, 'finished');
  assert.equal(h.status, 'completed');
  assert.equal(h.backbone, 'resnet18');
  assert.equal(h.ampLevel, 'O2');
  assert.equal(h.lossScaleMode, 'dynamic');
  assert.equal(h.step, 36);
  assert.equal(h.totalSteps, 36);
  assert.equal(h.totalEpochs, 4);
  assert.deepEqual(h.classes, ['blue triangle', 'green square', 'red circle', 'yellow cross']);
  assert.match(h.bestCheckpoint ?? '', /^checkpoints\/burst-e\d-s\d+\.ckpt$/);
  assert.equal(typeof h.bestValAcc, 'number');
  assert.deepEqual(
    s.notices.map((n) => n.code),
    ['sink_unavailable'],
  );
});

test('a failed run carries its error into the header and the notices; NaN losses become null', () => {
  const s = newStore();
  s.ingest(recorded('amp-nan-no-scaling'));
  const h = s.header();
  assert.equal(h.status, 'failed');
  assert.equal(h.error?.kind, 'nonfinite_loss');
  assert.equal(h.error?.fix, undefined, 'only bad input carries a field and a fix');
  const bad = newStore();
  const m = new EventMaker();
  bad.ingest([
    m.ev('run_finished', {
      status: 'failed',
      error: {
        kind: 'bad_input',
        message: 'one class',
        trace_tail: null,
        path: 'data.train',
        fix: 'add a class folder',
      },
      best: null,
      final: null,
    }),
  ]);
  assert.deepEqual(bad.header().error, {
    kind: 'bad_input',
    message: 'one class',
    traceTail: null,
    path: 'data.train',
    fix: 'add a class folder',
  });
  assert.deepEqual(
    s.notices.map((n) => [n.level, n.code]),
    [
      ['warning', 'sink_unavailable'],
      ['error', 'nonfinite_loss'],
    ],
  );
  const b = s.stepRange(0, s.steps.length);
  assert.deepEqual(b.loss.slice(2), [null, null, null, null]);
  assert.deepEqual(b.lossScale, [null, null, null, null, null, null]);
});

test('events already seen are ignored (a re-attach replays from seq 0)', () => {
  const s = newStore();
  const events = recorded('amp-startup-burst');
  assert.equal(s.ingest(events.slice(0, 20)), 20);
  assert.equal(s.ingest(events), events.length - 20);
  assert.equal(s.ingest(events), 0);
  assert.equal(s.steps.length, 36);
  // a newer runner's unknown event, and a step without its number, break nothing
  const m = new EventMaker();
  m.seq = s.lastSeq;
  s.ingest([m.ev('future_event', { x: 1 }), m.ev('step', { epoch: 5, loss: 1 })]);
  assert.equal(s.steps.length, 36);
  assert.equal(s.overflowsTotal, 8);
});

test('a resume from an older checkpoint replaces the steps after it (steps stay ascending, totals recounted)', () => {
  const m = new EventMaker();
  const s = newStore();
  const ev: RunEvent[] = [m.started()];
  for (let i = 1; i <= 8; i++) ev.push(m.step(i, { overflow: i >= 6 }));
  s.ingest(ev);
  assert.equal(s.overflowsTotal, 3);
  const before = s.rewinds;
  // the process died after step 8; the last checkpoint was at step 5
  s.ingest([m.started(), m.step(6, { loss: 0.5 }), m.step(7)]);
  const b = s.stepRange(0, s.steps.length);
  assert.deepEqual(b.steps, [1, 2, 3, 4, 5, 6, 7]);
  assert.equal(b.loss[5], 0.5);
  assert.equal(s.overflowsTotal, 0);
  assert.equal(s.rewinds, before + 1);
});

test('a live run: phase and latest step from the run state, ETA from the recent step times', () => {
  const m = new EventMaker();
  const s = newStore();
  s.ingest([m.started({ totalSteps: 20 })]);
  assert.equal(s.header().phase, 'running');
  assert.equal(s.header().etaS, null, 'no pace before the first step');
  const steps = [
    m.step(1, { step_ms: 5000 }),
    ...Array.from({ length: 59 }, (_, i) => m.step(i + 2, { step_ms: 250 })),
  ].slice(0, 10);
  s.ingest(steps);
  const h = s.header();
  assert.equal(h.step, 10);
  assert.equal(h.totalSteps, 20);
  // (5000 + 9 * 250) / 10 ms per step, 10 steps left
  assert.equal(h.etaS, 10 * 0.725);
  s.signal({ kind: 'dropped' });
  assert.equal(s.header().phase, 'reconnecting');
  s.ingest([m.step(11)]);
  assert.equal(s.header().phase, 'running', 'the next event: running again');
  assert.equal(s.header().step, 11);
  s.ingest([m.ev('run_finished', { status: 'stopped', error: null, best: null, final: null })]);
  assert.equal(s.header().phase, 'finished');
  assert.equal(s.header().etaS, null);
});

test('device samples: one row per event, per-device columns padded where a device is missing', () => {
  const m = new EventMaker();
  const s = newStore();
  const dev = (ids: number[]) =>
    m.ev('device', {
      devices: ids.map((id) => ({
        id,
        util: 50 + id,
        hbm_used_mb: 1000,
        hbm_total_mb: 65536,
        temp_c: 40,
        power_w: null,
      })),
    });
  s.ingest([m.started(), m.step(1), dev([0]), m.step(2), dev([0, 1]), dev([1])]);
  const d = s.deviceBlock();
  assert.deepEqual(d.steps, [1, 2, 2]);
  assert.deepEqual(d.devices['0'].util, [50, 50, null]);
  assert.deepEqual(d.devices['1'].util, [null, 51, 51]);
  assert.deepEqual(d.devices['1'].powerW, [null, null, null]);
  assert.deepEqual(s.deviceBlock(2).devices['0'].util, [null]);
});

/** A store of n synthetic steps with spikes at known rows. */
function bigStore(n: number, spikes: { loss?: number; lossScale?: number; imgPerS?: number; overflow?: number[] }) {
  const s = newStore();
  const m = new EventMaker();
  const ev: RunEvent[] = [m.started({ totalSteps: n })];
  const overflow = new Set(spikes.overflow ?? []);
  for (let i = 1; i <= n; i++) {
    ev.push(
      m.step(i, {
        loss: i === spikes.loss ? 50 : 1 + Math.sin(i / 50) * 0.1,
        loss_scale: i === spikes.lossScale ? 2 : 65536,
        img_per_s: i === spikes.imgPerS ? 1 : 64 + (i % 7),
        overflow: overflow.has(i),
      }),
    );
  }
  s.ingest(ev);
  return s;
}

const select = (s: RunSeriesStore, width: number, range = { min: null as number | null, max: null as number | null }) =>
  selectRows(
    s.steps.step,
    STEP_SERIES.map((k) => s.steps.series(k)),
    s.steps.overflow,
    range,
    width,
  );

test('downsampling keeps the extremes of every series and every overflowed step, on real steps', () => {
  const s = bigStore(100_000, {
    loss: 31_337,
    lossScale: 77_777,
    imgPerS: 5_001,
    overflow: [10, 11, 12, 50_000, 99_999],
  });
  const sel = select(s, 500);
  assert.ok(sel.downsampled);
  assert.equal(sel.inRange, 100_000);
  assert.ok(sel.rows.length <= 250 * 14 + 5, `bounded by the width: ${sel.rows.length} rows`);
  assert.ok(sel.rows.length >= 500, 'at least first and last of each 2-pixel bucket');
  const b = s.stepBlock(sel.rows);
  const kept = new Set(b.steps);
  for (const st of [31_337, 77_777, 5_001, 10, 11, 12, 50_000, 99_999, 1, 100_000])
    assert.ok(kept.has(st), `step ${st} kept`);
  assert.equal(Math.max(...(b.loss as number[])), 50);
  assert.equal(Math.min(...(b.lossScale as number[])), 2);
  assert.equal(Math.min(...(b.imgPerS as number[])), 1);
  assert.equal(
    b.overflow.reduce<number>((a, v) => a + v, 0),
    5,
    'every overflow marker',
  );
  // rows are real steps, ascending, each column taken from the same row
  for (let i = 1; i < b.steps.length; i++) assert.ok(b.steps[i] > b.steps[i - 1]);
  const i = b.steps.indexOf(31_337);
  assert.equal(b.lossScale[i], 65536);
  assert.equal(b.imgPerS[i], 64 + (31_337 % 7));
});

test('every overflow survives even when there are more overflows than pixels', () => {
  const overflow = Array.from({ length: 3000 }, (_, k) => 1 + k * 20);
  const s = bigStore(60_000, { overflow });
  const b = s.stepBlock(select(s, 200).rows);
  assert.equal(b.overflow.filter((v) => v === 1).length, 3000);
});

test('a short range is sent whole; zoom refines to the range at full resolution', () => {
  const s = bigStore(10_000, { loss: 5_123 });
  const small = select(s, 800, { min: 5_000, max: 5_600 });
  assert.equal(small.downsampled, false);
  const b = s.stepBlock(small.rows);
  assert.equal(b.steps[0], 5_000);
  assert.equal(b.steps[b.steps.length - 1], 5_600);
  assert.equal(b.steps.length, 601, 'every step of the zoomed range');
  // the zoomed range of a wide window is downsampled again, but only inside [min, max]
  const wide = select(s, 100, { min: 2_000, max: 9_000 });
  const w = s.stepBlock(wide.rows);
  assert.ok(wide.downsampled);
  assert.ok(w.steps[0] === 2_000 && w.steps[w.steps.length - 1] === 9_000);
  assert.ok(w.steps.includes(5_123));
  assert.equal(select(s, 100, { min: 20_000, max: null }).rows.length, 0);
});

test('a NaN (diverged loss) inside a bucket stays a gap, not smoothed away', () => {
  const s = newStore();
  const m = new EventMaker();
  const ev: RunEvent[] = [m.started()];
  for (let i = 1; i <= 10_000; i++) ev.push(m.step(i, { loss: i === 4_242 ? null : 1 }));
  s.ingest(ev);
  const b = s.stepBlock(select(s, 100).rows);
  assert.equal(b.loss[b.steps.indexOf(4_242)], null);
});

test('top-5 accuracy of each eval becomes its own column; an eval from an older runner has null there', () => {
  const m = new EventMaker();
  const s = newStore();
  const evalAt = (step: number, extra: Record<string, unknown>) =>
    m.ev('eval', { epoch: step / 4, step, val_loss: 1, val_acc: 0.5, per_class_acc: [], confusion: [], ...extra });
  s.ingest([m.started(), evalAt(4, {}), evalAt(8, { val_top5: 0.875 })]);
  assert.deepEqual(s.evalBlock().valTop5, [null, 0.875]);
  assert.deepEqual(s.evalBlock(1).valTop5, [0.875]);
});

test('a run in sink mode: one row per sink, its first step alongside, its mean loss as the loss', () => {
  const s = newStore();
  const evs = recorded('sink-run');
  s.ingest(evs);
  const sinks = evs.filter((e) => e.type === 'step') as unknown as { first_step: number; mean_loss: number }[];
  const all = s.stepRange(0, s.steps.length);
  assert.deepEqual(all.steps, [3, 6, 9, 12, 15, 18]);
  assert.deepEqual(all.firstStep, [1, 4, 7, 10, 13, 16]);
  assert.deepEqual(
    all.loss,
    sinks.map((e) => e.mean_loss),
  );
  assert.deepEqual(all.dataMs, [null, null, null, null, null, null], 'no data wait is reported for a sink');
  // A run without sinks sends no firstStep column at all.
  const plain = newStore();
  plain.ingest(recorded('amp-startup-burst'));
  assert.equal(plain.stepRange(0, plain.steps.length).firstStep, undefined);
});

test("a sink run counts every overflowed step of its sinks, not only each sink's last", () => {
  // Recorded (fixtures README): the 2^24 start-up burst overflows steps 1-7 and 9; in sinks of 3
  // the events' own flags say 3 overflows (steps 3, 6, 9), their counts say 8.
  const evs = recorded('sink-run');
  const steps = evs.filter((e) => e.type === 'step') as unknown as { overflow: boolean }[];
  assert.equal(steps.filter((e) => e.overflow).length, 3, 'the last steps alone');
  const s = newStore();
  s.ingest(evs);
  assert.deepEqual(s.stepRange(0, s.steps.length).overflow, [3, 3, 2, 0, 0, 0]);
  assert.equal(s.overflowsTotal, 8);
  assert.equal(s.skippedTotal, 8);
  let view = initialView();
  for (const e of evs) view = applyEvent(view, e);
  assert.equal(view.overflows, 8, "the run state's count (the Runs view's) agrees");
  // Every row with an overflow survives downsampling, with its count.
  const rows = selectRows(s.steps.step, [s.steps.loss], s.steps.overflow, { min: null, max: null }, 1);
  let kept = 0;
  for (const r of rows.rows) kept += s.steps.overflow.data[r];
  assert.equal(kept, 8);
  // A resume that rewinds into the sinks takes their counts back out.
  const m = new EventMaker();
  m.seq = evs[evs.length - 1].seq;
  s.ingest([
    m.ev('run_started', { run_id: 'sinkrun', spec: {}, classes: [], resumed_from: { file: 'x', step: 3 } }),
    m.ev('step', {
      epoch: 1,
      step: 6,
      first_step: 4,
      loss: 1,
      mean_loss: 1,
      lr: 0.01,
      loss_scale: 2 ** 20,
      overflow: false,
      skipped: false,
      overflows: 1,
      skipped_updates: 1,
      step_ms: 1,
      img_per_s: 1,
    }),
  ]);
  assert.equal(s.overflowsTotal, 4);
  assert.equal(s.skippedTotal, 4);
});

test('sink events of an older runner (no counts) keep their one-flag meaning', () => {
  const old = recorded('sink-run').map((e) => {
    if (e.type !== 'step') return e;
    const { overflows: _o, skipped_updates: _s, ...rest } = e as unknown as Record<string, unknown>;
    return rest as unknown as RunEvent;
  });
  const s = newStore();
  s.ingest(old);
  assert.deepEqual(s.stepRange(0, s.steps.length).overflow, [1, 1, 1, 0, 0, 0]);
  assert.equal(s.overflowsTotal, 3);
  assert.equal(s.skippedTotal, 3);
});
