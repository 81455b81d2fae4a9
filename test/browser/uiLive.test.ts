// The single-run charts' columns as the UI extends them on live appends (webview/dashboard/live.ts),
// in Node: after any sequence of appends they must equal the columns computed from all rows at once
// (series.ts), which is what the UI drew before it extended them in place.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { EvalBlock, RunData, StepBlock } from '../../src/shared/dashboardProtocol';
import { applyAppend, ingestRuns } from '../../webview/dashboard/ingest';
import { SingleRunColumns } from '../../webview/dashboard/live';
import { joinOnX, overflowMarkers, overflowsInWindow, smooth } from '../../webview/dashboard/series';

const emptySteps = (): StepBlock => ({
  steps: [],
  loss: [],
  lr: [],
  lossScale: [],
  overflow: [],
  imgPerS: [],
  stepMs: [],
  dataMs: [],
});
const emptyEvals = (): EvalBlock => ({ steps: [], epochs: [], valLoss: [], valAcc: [], perClassAcc: [] });

function addSteps(s: StepBlock, from: number, to: number): void {
  for (let i = from; i <= to; i++) {
    s.steps.push(i);
    s.loss.push(i % 7 === 0 ? null : 2 / (1 + i) + (i % 3) * 0.01);
    s.lr.push(0.01);
    // some rows count several overflowed steps (a sink's row): the window sums them
    const overflow = i % 5 === 0 ? 1 + (i % 3) : 0;
    s.lossScale.push(overflow ? 512 : 1024);
    s.overflow.push(overflow);
    s.imgPerS.push(100);
    s.stepMs.push(10);
    s.dataMs.push(1);
  }
}

function addEval(e: EvalBlock, step: number): void {
  e.steps.push(step);
  e.epochs.push(e.steps.length);
  e.valLoss.push(1 / step);
  e.valAcc.push(step % 2 ? null : 0.5);
  e.perClassAcc.push([]);
}

/** What the UI computed from all rows on every render before. */
function expected(s: StepBlock, e: EvalBlock, weight: number, window: number) {
  return {
    loss: joinOnX([
      { x: s.steps, ys: [s.loss, smooth(s.loss, weight)] },
      { x: e.steps, ys: [e.valLoss] },
    ]),
    markers: overflowMarkers(s),
    counts: overflowsInWindow(s.steps, s.overflow, window),
    acc: e.valAcc.map((v) => (v === null ? null : v * 100)),
  };
}

function check(c: SingleRunColumns, s: StepBlock, e: EvalBlock, weight: number, window: number, what: string): void {
  const want = expected(s, e, weight, window);
  assert.deepEqual(c.loss, want.loss, `${what}: loss chart columns`);
  assert.deepEqual(c.markers, want.markers, `${what}: overflow markers`);
  assert.deepEqual(c.overflowCounts, want.counts, `${what}: overflows per window`);
  assert.deepEqual(c.accPercent, want.acc, `${what}: accuracy`);
}

test('appended steps and evals (on a step row, before, with and after it) extend the columns exactly', () => {
  const s = emptySteps();
  const e = emptyEvals();
  const c = new SingleRunColumns();
  assert.deepEqual(c.update(s, e, 0.6, 12), { steps: true, evals: true }, 'the first look builds everything');
  const xBefore = c.loss[0];
  addSteps(s, 1, 30);
  assert.deepEqual(c.update(s, e, 0.6, 12), { steps: true, evals: false });
  check(c, s, e, 0.6, 12, 'steps only');
  addEval(e, 30); // the eval of a step row that came in an earlier append
  assert.deepEqual(c.update(s, e, 0.6, 12), { steps: false, evals: true });
  check(c, s, e, 0.6, 12, 'eval on an earlier step row');
  addEval(e, 35); // an eval ahead of the steps
  addSteps(s, 31, 40); // ... which then come, one of them at the eval's step
  addEval(e, 40);
  c.update(s, e, 0.6, 12);
  check(c, s, e, 0.6, 12, 'evals merged with new steps');
  assert.equal(c.loss[0], xBefore, 'the arrays the charts hold are extended, not replaced');
  assert.deepEqual(c.update(s, e, 0.6, 12), { steps: false, evals: false }, 'nothing new, nothing changed');
});

test('a new smoothing, window, snapshot or an out-of-order eval rebuilds the columns', () => {
  const s = emptySteps();
  const e = emptyEvals();
  addSteps(s, 1, 50);
  addEval(e, 20);
  const c = new SingleRunColumns();
  c.update(s, e, 0.6, 12);
  c.update(s, e, 0.9, 12);
  check(c, s, e, 0.9, 12, 'new smoothing');
  c.update(s, e, 0.9, 3);
  check(c, s, e, 0.9, 3, 'new window');
  addEval(e, 10.5); // between two x values the axis has: needs an insertion
  addSteps(s, 51, 55);
  c.update(s, e, 0.9, 3);
  check(c, s, e, 0.9, 3, 'eval between existing steps');
  const s2 = emptySteps();
  addSteps(s2, 100, 120);
  const e2 = emptyEvals();
  assert.deepEqual(c.update(s2, e2, 0.9, 3), { steps: true, evals: true });
  check(c, s2, e2, 0.9, 3, 'a snapshot (new blocks)');
});

test('sink rows from snapshots and appends reach the loss chart as flat ranges over their steps', () => {
  const sinkRows = (first: number, last: number, size: number, loss: number): StepBlock => {
    const b = { ...emptySteps(), firstStep: [] as (number | null)[] };
    for (let f = first; f <= last; f += size) {
      b.steps.push(f + size - 1);
      b.firstStep.push(f);
      b.loss.push(loss);
      b.lr.push(0.01);
      b.lossScale.push(null);
      b.overflow.push(0);
      b.imgPerS.push(50);
      b.stepMs.push(80);
      b.dataMs.push(null);
    }
    return b;
  };
  const run = {
    header: { key: 'k' },
    steps: sinkRows(1, 8, 4, 1.5),
    evals: emptyEvals(),
    totalStepRows: 2,
  } as unknown as RunData;
  const [page] = ingestRuns([run]);
  applyAppend(page, {
    type: 'append',
    key: 'k',
    header: page.header,
    steps: sinkRows(9, 12, 4, 0.9),
    amp: page.amp,
    revision: 2,
  });
  assert.equal(page.totalStepRows, 3, 'three sinks from the host');
  const cols = new SingleRunColumns();
  cols.update(page.steps, page.evals, 0, 100);
  const [x, loss] = cols.loss;
  assert.deepEqual(x, [1, 4, 5, 8, 9, 12]);
  assert.deepEqual(loss, [1.5, 1.5, 1.5, 1.5, 0.9, 0.9]);
});
