// The AMP health card's diagnoses, each on a recorded event sequence from a real CPU run of the
// runner (test/unit/fixtures/dashboard/README.md), except the overflow storm, which a CPU run does
// not produce (synthesized below, and said so).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ampHealth, fmtScale } from '../../../src/core/dashboard/ampHealth';
import { ampScaling } from '../../../src/core/dashboard/ampScaling';
import { RunSeriesStore } from '../../../src/core/dashboard/seriesStore';
import type { RunEvent } from '../../../src/shared/eventsProtocol';
import { EventMaker, recorded } from '../fixtures/dashboard/events';

function health(events: RunEvent[], window?: number) {
  const store = new RunSeriesStore('r', { name: 'r', target: 'This machine' });
  store.ingest(events);
  return ampHealth(store, window);
}
const codes = (h: ReturnType<typeof health>) => h.diagnosis.map((d) => d.code);

test('start-up burst with the 2^24 default (recorded): info, with the halving explained, nothing else', () => {
  const h = health(recorded('amp-startup-burst'));
  assert.deepEqual(codes(h), ['startup_burst']);
  const d = h.diagnosis[0];
  assert.equal(d.severity, 'info');
  assert.match(d.message, /started at 2\^24/);
  assert.match(d.message, /overflowed on 8 of the first 9 steps/);
  assert.match(d.message, /down to 2\^16; no overflow since/);
  assert.equal(h.overflowsTotal, 8);
  assert.equal(h.skippedTotal, 8);
  assert.equal(h.currentScale, 65536);
});

test('start-up burst while it is still going (the first 5 recorded steps): expected, not an alarm', () => {
  const events = recorded('amp-startup-burst');
  const upToStep5 = events.slice(
    0,
    events.findIndex((e) => e.type === 'step' && (e as { step: number }).step === 5) + 1,
  );
  const h = health(upToStep5);
  assert.deepEqual(codes(h), ['startup_burst']);
  assert.match(h.diagnosis[0].message, /is halving on each overflow \(5 so far, now 2\^19\)/);
});

test('scale pinned at 1.0 (recorded, lr 100 at O2): an error that says no update happens', () => {
  const h = health(recorded('amp-scale-pinned'));
  assert.equal(codes(h)[0], 'scale_pinned_low');
  assert.ok(!codes(h).includes('startup_burst'), 'a run that overflows to the floor is no start-up burst');
  assert.ok(!codes(h).includes('overflow_storm'), 'pinned is the sharper diagnosis');
  const d = h.diagnosis[0];
  assert.equal(d.severity, 'error');
  assert.match(d.message, /floor of 1/);
  assert.match(d.message, /no update is applied/);
  assert.match(d.fix ?? '', /lower train\.lr/);
  assert.equal(h.currentScale, 1);
});

test('scale pinned is not claimed before enough steps sit at the floor', () => {
  const events = recorded('amp-scale-pinned');
  // up to step 13: only two steps at 1.0 so far
  const cut = events.findIndex((e) => e.type === 'step' && (e as { step: number }).step === 13) + 1;
  assert.ok(!codes(health(events.slice(0, cut))).includes('scale_pinned_low'));
});

test('NaN losses without overflow and no loss scaling at O3 (recorded): a divergence error first, then the fp16 warning', () => {
  const h = health(recorded('amp-nan-no-scaling'));
  assert.deepEqual(codes(h), ['nan_without_overflow', 'no_scaling']);
  const [nan, noScale] = h.diagnosis;
  assert.equal(nan.severity, 'error');
  assert.match(nan.message, /4 steps had a NaN or Inf loss \(first at step 3\)/);
  assert.match(nan.message, /not a loss-scale overflow/);
  assert.match(nan.fix ?? '', /Lower train\.lr/);
  assert.match(nan.fix ?? '', /amp\.level O0/);
  assert.equal(noScale.severity, 'warning');
  assert.match(noScale.message, /fp16 \(O3\) without loss scaling/);
  assert.equal(h.overflowsTotal, 0);
  assert.equal(h.skippedTotal, 4);
  assert.equal(h.currentScale, null);
});

test('NaN loss with finite gradients under dynamic scaling: a bug, not AMP (synthesized: the runner flags the skip without overflow)', () => {
  const m = new EventMaker();
  const ev = [m.started()];
  for (let i = 1; i <= 30; i++) ev.push(m.step(i, i === 20 ? { loss: null, skipped: true } : {}));
  const h = health(ev);
  assert.deepEqual(codes(h), ['nan_without_overflow']);
  assert.match(h.diagnosis[0].message, /while the gradients did not overflow\. That is not mixed precision/);
});

test('overflow storm long after the start (SYNTHESIZED: no CPU run produces one): a warning with the count', () => {
  const m = new EventMaker();
  const ev = [m.started({ totalSteps: 2000 })];
  let scale = 65536;
  for (let i = 1; i <= 1000; i++) {
    // clean until step 900, then every 5th step overflows (the scale drops and recovers)
    const overflow = i > 900 && i % 5 === 0;
    if (overflow) scale /= 2;
    else if (i % 20 === 0) scale *= 2;
    ev.push(m.step(i, { overflow, loss_scale: scale }));
  }
  const h = health(ev);
  assert.deepEqual(codes(h), ['overflow_storm']);
  assert.equal(h.overflowsRecent, 20);
  assert.equal(h.window, 200);
  assert.match(h.diagnosis[0].message, /20 of the last 200 steps overflowed/);
  assert.equal(h.diagnosis[0].severity, 'warning');
});

test('one isolated overflow after a clean stretch is no storm (the scale probing upward)', () => {
  const m = new EventMaker();
  const ev = [m.started()];
  for (let i = 1; i <= 500; i++) ev.push(m.step(i, { overflow: i === 400 }));
  assert.deepEqual(codes(health(ev)), ['ok']);
});

test('full precision without scaling is fine, and a run with no steps says so', () => {
  const m = new EventMaker();
  const ev = [m.started({ amp: { level: 'O0', loss_scale: 'none' } })];
  assert.match(health(ev).diagnosis[0].message, /No steps yet/);
  for (let i = 1; i <= 10; i++) ev.push(m.step(i, { loss_scale: null }));
  const h = health(ev);
  assert.deepEqual(codes(h), ['ok']);
  assert.match(h.diagnosis[0].message, /Full precision \(O0\)/);
});

test('fmtScale writes powers of two as 2^k', () => {
  assert.equal(fmtScale(16777216), '2^24');
  assert.equal(fmtScale(1), '1');
  assert.equal(fmtScale(NaN), 'unknown');
});

// ---- one source of truth for the header and the card (issue 17) ------------------------------------

test('ampScaling: O0 says no loss scaling is needed, whatever the spec asked; fp16 levels say their scale', () => {
  const o0 = ampScaling('O0', 'dynamic');
  assert.equal(o0.applies, false);
  assert.equal(o0.summary, 'O0 (full precision), no loss scaling needed');
  assert.doesNotMatch(o0.summary, /dynamic|2\^/);
  assert.match(
    o0.notApplicable ?? '',
    /^Loss scaling does not apply: O0 trains in full precision.*dynamic scale of the spec is not needed/,
  );
  assert.deepEqual(ampScaling('O2', 'dynamic'), { applies: true, summary: 'O2, loss scale dynamic' });
  assert.deepEqual(ampScaling('O3', 'none'), { applies: false, summary: 'O3, no loss scaling' });
  assert.equal(ampScaling('O0', 'none').applies, false);
  assert.equal(ampScaling(undefined, undefined).summary, '–');
});

test('an O0 run with the dynamic default: the header and the AMP card agree (no scale applies), with one line', () => {
  const m = new EventMaker();
  const store = new RunSeriesStore('r', { name: 'r', target: 'This machine' });
  store.ingest([
    m.started({ amp: { level: 'O0', loss_scale: 'dynamic' } }),
    m.step(1, { loss_scale: 16777216 }),
    m.step(2, { loss_scale: 16777216 }),
  ]);
  const header = store.header();
  const amp = ampHealth(store);
  assert.equal(header.ampSummary, 'O0 (full precision), no loss scaling needed');
  assert.equal(amp.applies, false);
  assert.match(amp.notApplicable ?? '', /does not apply/);
  assert.match(amp.diagnosis[0].message, /no loss scaling needed/);
  const o2 = new RunSeriesStore('r2', { name: 'r2', target: 'here' });
  o2.ingest([new EventMaker().started({ amp: { level: 'O2', loss_scale: 'dynamic' } })]);
  assert.equal(o2.header().ampSummary, 'O2, loss scale dynamic');
  assert.equal(ampHealth(o2).applies, true);
});

test("the header carries run_finished's verdict (code, message, fix); none before the end or from an older runner", () => {
  const m = new EventMaker();
  const store = new RunSeriesStore('r', { name: 'r', target: 'here' });
  store.ingest([m.started(), m.step(1)]);
  assert.equal(store.header().health, null);
  store.ingest([
    m.ev('run_finished', {
      status: 'completed',
      error: null,
      best: null,
      final: null,
      health: {
        verdict: 'problems',
        reasons: [
          { code: 'loss_rose', message: 'The loss rose.', fix: 'Lower train.lr.', early_loss: 9, late_loss: 2000 },
          7,
        ],
      },
    }),
  ]);
  assert.deepEqual(store.header().health, {
    verdict: 'problems',
    reasons: [{ code: 'loss_rose', message: 'The loss rose.', fix: 'Lower train.lr.' }],
  });
});

test("a sink run's start-up burst (recorded): every overflowed step of the sinks, the scale it started at", () => {
  const h = health(recorded('sink-run'));
  assert.deepEqual(codes(h), ['startup_burst']);
  const d = h.diagnosis[0];
  assert.match(d.message, /started at 2\^24/, "the first sink's scale is after its 3 halvings");
  assert.match(d.message, /overflowed on 8 of the first 9 steps/);
  assert.match(d.message, /down to 2\^16; no overflow since/);
  assert.equal(h.overflowsTotal, 8);
  assert.equal(h.skippedTotal, 8);
  assert.equal(h.overflowsRecent, 8);
});

test('a storm inside sinks is seen although every sink ends on a clean step', () => {
  // Synthesized (a CPU run does not storm): sinks of 10 steps, 4 overflows each after a clean start.
  const m = new EventMaker();
  const evs: RunEvent[] = [m.started({ totalSteps: 400, stepsPerEpoch: 400, initScale: 1024 })];
  for (let last = 10; last <= 200; last += 10) {
    const overflows = last <= 50 ? 0 : 4;
    evs.push(
      m.ev('step', {
        epoch: 1,
        step: last,
        first_step: last - 9,
        loss: 1,
        mean_loss: 1,
        lr: 0.01,
        loss_scale: 1024,
        overflow: false,
        skipped: false,
        overflows,
        skipped_updates: overflows,
        step_ms: 1,
        img_per_s: 1,
      }),
    );
  }
  const h = health(evs);
  assert.deepEqual(codes(h), ['overflow_storm']);
  assert.equal(h.overflowsTotal, 60);
  assert.match(h.diagnosis[0].message, /60 of the last 200 steps overflowed/);
});
