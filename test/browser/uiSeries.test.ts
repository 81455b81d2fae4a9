// The dashboard UI's pure computations (webview/dashboard/series.ts), in Node: smoothing, overflow
// counts per window, joining runs on one step axis, CSV, and the formats the header shows.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { DashboardHeader, EvalBlock, StepBlock } from '../../src/shared/dashboardProtocol';
import {
  formatDuration,
  formatScale,
  joinOnX,
  overflowMarkers,
  overflowsInWindow,
  safeFileName,
  smooth,
  spanSinks,
  toCsv,
} from '../../webview/dashboard/series';

test('smoothing 0 is the raw series; NaN losses stay gaps and do not poison later points', () => {
  assert.deepEqual(smooth([1, 2, 3], 0), [1, 2, 3]);
  const s = smooth([2, null, 2, 4], 0.5);
  assert.equal(s[0], 2, 'debiased: the first point is the first value');
  assert.equal(s[1], null);
  assert.equal(s[2], 2);
  assert.ok(s[3]! > 2 && s[3]! < 4, `${s[3]} lies between the old level and the new value`);
});

test('overflows per window count every overflowed step in (step - window, step]', () => {
  const steps = [1, 2, 3, 10, 11, 200, 300];
  const overflow: (0 | 1)[] = [1, 1, 0, 1, 0, 0, 1];
  assert.deepEqual(overflowsInWindow(steps, overflow, 100), [1, 2, 2, 3, 3, 0, 1]);
  assert.deepEqual(overflowsInWindow(steps, overflow, 1), [1, 1, 0, 1, 0, 0, 1]);
});

test("a sink row's overflow count counts as that many overflowed steps, at its last step", () => {
  // rows at the ends of sinks of 4 (steps 1-4, 5-8, 9-12): 3, 0 and 2 of their steps overflowed
  assert.deepEqual(overflowsInWindow([4, 8, 12], [3, 0, 2], 8), [3, 3, 2]);
  assert.deepEqual(overflowsInWindow([4, 8, 12], [3, 0, 2], 100), [3, 3, 5]);
  assert.deepEqual(overflowMarkers({ lossScale: [2048, 2048, 512], overflow: [3, 0, 2], loss: [1, 1, 1] }), [
    2048,
    null,
    512,
  ]);
});

test('overflow markers sit on the loss scale of the overflowed steps only', () => {
  assert.deepEqual(overflowMarkers({ lossScale: [1024, 512, 512], overflow: [1, 0, 1], loss: [1, 1, 1] }), [
    1024,
    null,
    512,
  ]);
});

test('joinOnX aligns runs with different steps on their union', () => {
  const [x, a, b] = joinOnX([
    { x: [1, 3], ys: [[10, 30]] },
    { x: [2, 3], ys: [[20, 31]] },
  ]);
  assert.deepEqual(x, [1, 2, 3]);
  assert.deepEqual(a, [10, null, 30]);
  assert.deepEqual(b, [null, 20, 31]);
});

const header = (name: string): DashboardHeader => ({ key: 'r1', name, phase: 'finished', target: 't', classes: [] });
const steps: StepBlock = {
  steps: [1, 2],
  loss: [1.5, null],
  lr: [0.01, 0.01],
  lossScale: [1024, 512],
  overflow: [0, 1],
  imgPerS: [50, 51],
  stepMs: [300, 310],
  dataMs: [1, 2],
};
const evals: EvalBlock = { steps: [2], epochs: [1], valLoss: [0.9], valAcc: [0.5], perClassAcc: [[0.5, 0.5]] };

test('CSV: one row per step with eval columns on eval steps; a NaN loss is an empty cell', () => {
  const csv = toCsv([{ header: header('a'), steps, evals }])
    .trim()
    .split('\n');
  assert.deepEqual(csv, [
    'step,loss,lr,loss_scale,overflow,img_per_s,step_ms,data_ms,epoch,val_loss,val_acc',
    '1,1.5,0.01,1024,0,50,300,1,,,',
    '2,,0.01,512,1,51,310,2,1,0.9,0.5',
  ]);
});

test('CSV of several runs names each row; a run name cannot become a spreadsheet formula', () => {
  const csv = toCsv([
    { header: header('=HYPERLINK("http://x")'), steps, evals },
    { header: header('b,c'), steps, evals },
  ])
    .trim()
    .split('\n');
  assert.equal(csv[0].split(',')[0], 'run');
  assert.ok(csv[1].startsWith(`"'=HYPERLINK(""http://x"")",1,`), csv[1]);
  assert.ok(csv[3].startsWith('"b,c",1,'), csv[3]);
});

test('formats: powers of two, durations, file names', () => {
  assert.equal(formatScale(16777216), '2^24 (1.68e+7)');
  assert.equal(formatScale(1), '2^0 (1)');
  assert.equal(formatScale(null), '–');
  assert.equal(formatDuration(75), '1m 15s');
  assert.equal(formatDuration(3725), '1h 02m');
  assert.equal(safeFileName('../../etc/passwd', 'csv'), 'etc-passwd.csv');
  assert.equal(safeFileName('<img src=x>', 'png'), 'img-src-x.png');
  assert.equal(safeFileName('live <b>A</b>-loss', 'png'), 'live-b-A-b-loss.png');
});

test('a sink row (one event for several steps) is spread over the steps it covers, flat at its values', () => {
  const b: StepBlock = {
    steps: [1, 5, 9],
    loss: [1.0, 0.8, 0.7], // the sinks' mean losses
    lr: [0.01, 0.01, 0.02],
    lossScale: [1024, 512, 512],
    overflow: [0, 1, 0],
    imgPerS: [10, 40, 42],
    stepMs: [800, 200, 190],
    dataMs: [5, null, null],
    firstStep: [null, 2, 6],
  };
  const s = spanSinks(b);
  assert.deepEqual(s.steps, [1, 2, 5, 6, 9], 'each sink starts at its first step and ends at its last');
  assert.deepEqual(s.loss, [1.0, 0.8, 0.8, 0.7, 0.7]);
  assert.deepEqual(s.imgPerS, [10, 40, 40, 42, 42]);
  assert.deepEqual(s.overflow, [0, 0, 1, 0, 0], 'an overflowed sink is marked (and counted) once, at its end');
  assert.equal(s.firstStep, undefined);
  const plain: StepBlock = { ...b, firstStep: undefined };
  delete plain.firstStep;
  assert.equal(spanSinks(plain), plain, 'a run without sinks is drawn as it is');
});
