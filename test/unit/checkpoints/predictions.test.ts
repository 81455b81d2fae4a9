// The predictions gallery's choices (src/core/checkpoints/predictions.ts) on hand-made records, and
// the checks on what a runner's `<ckpt>.eval.json` and `thumbs` answer hold.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkpointArgs, toEvalResult, toThumbs } from '../../../src/core/checkpoints/client';
import {
  cellImages,
  confidentMistakes,
  diffPredictions,
  toPredictionRecords,
  type PredictionRecord,
} from '../../../src/core/checkpoints/predictions';

const rec = (file: string, label: number, top: [number, number][] | null): PredictionRecord => ({ file, label, top });
// 3 classes: a cat (0) taken for a dog (1) twice, with 0.9 and 0.6; one right dog; one NaN row.
const A = [
  rec('cat/1.jpg', 0, [
    [1, 0.6],
    [0, 0.3],
    [2, 0.1],
  ]),
  rec('cat/2.jpg', 0, [
    [1, 0.9],
    [0, 0.05],
    [2, 0.05],
  ]),
  rec('cat/3.jpg', 0, [
    [0, 0.8],
    [1, 0.1],
    [2, 0.1],
  ]),
  rec('dog/1.jpg', 1, [
    [1, 0.7],
    [2, 0.2],
    [0, 0.1],
  ]),
  rec('dog/2.jpg', 1, null),
];

test("a cell's images are its true and predicted class, the most confident first; a NaN row is in no cell", () => {
  assert.deepEqual(
    cellImages(A, 0, 1).map((r) => r.file),
    ['cat/2.jpg', 'cat/1.jpg'],
  );
  assert.deepEqual(
    cellImages(A, 1, 1).map((r) => r.file),
    ['dog/1.jpg'],
  );
  assert.deepEqual(cellImages(A, 1, 0), []);
  assert.deepEqual(
    confidentMistakes(A, 10).map((r) => r.file),
    ['cat/2.jpg', 'cat/1.jpg'],
  );
  assert.deepEqual(
    confidentMistakes(A, 1).map((r) => r.file),
    ['cat/2.jpg'],
  );
});

test('comparing by predictions: accuracy and per-class recall on the common images, the changed ones fixed first', () => {
  const B = [
    rec('cat/1.jpg', 0, [[0, 0.7]]), // fixed
    rec('cat/2.jpg', 0, [[2, 0.5]]), // wrong in both, differently
    rec('cat/3.jpg', 0, [[1, 0.6]]), // broken
    rec('dog/1.jpg', 1, [[1, 0.9]]), // unchanged
    rec('bird/9.jpg', 2, [[2, 0.9]]), // only in B: not counted
  ];
  const d = diffPredictions(A, B, 3);
  assert.equal(d.common, 4); // dog/2 has no record in B, bird/9 none in A
  assert.equal(d.accuracyA, 2 / 4);
  assert.equal(d.accuracyB, 2 / 4);
  assert.deepEqual(d.perClass, [
    { recallA: 1 / 3, recallB: 1 / 3, support: 3 },
    { recallA: 1, recallB: 1, support: 1 },
    { recallA: null, recallB: null, support: 0 },
  ]);
  assert.deepEqual(
    d.changed.map((c) => [c.file, c.kind]),
    [
      ['cat/1.jpg', 'fixed'],
      ['cat/3.jpg', 'broken'],
      ['cat/2.jpg', 'other'],
    ],
  );
});

test("malformed records from a runner's file are dropped, never trusted as indices", () => {
  const got = toPredictionRecords(
    [
      { file: 'ok.jpg', label: 1, top: [[0, 0.5]] },
      { file: 'nan.jpg', label: 0, top: null },
      { file: 'badlabel.jpg', label: 7, top: [[0, 1]] },
      { file: 'badclass.jpg', label: 0, top: [[9, 1]] },
      { file: 'badprob.jpg', label: 0, top: [[0, 'x']] },
      { file: 3, label: 0, top: null },
      'junk',
    ],
    2,
  );
  assert.deepEqual(got, [rec('ok.jpg', 1, [[0, 0.5]]), rec('nan.jpg', 0, null)]);
  assert.deepEqual(toPredictionRecords({ not: 'a list' }, 2), []);
  const e = toEvalResult({ classes: ['a', 'b'], top5: 1, predictions: [{ file: 'x', label: 0, top: [[1, 1]] }] });
  assert.equal(e.top5, 1);
  assert.deepEqual(e.predictions_kept, { total: 1, kept: 1, all: true });
  const old = toEvalResult({ classes: ['a', 'b'] }); // a runner before per-image predictions
  assert.equal(old.top5, null);
  assert.deepEqual(old.predictions, []);
  assert.equal(old.predictions_kept, null);
});

test('thumbs: names after `--` whatever they look like; only base64 thumbnails are taken', () => {
  const weird = '$(touch x) \'q" ;|&<>*/-a.jpg';
  assert.deepEqual(checkpointArgs.thumbs('-data', [weird, '--help']), ['thumbs', './-data', '--', weird, '--help']);
  assert.deepEqual(
    toThumbs({
      thumbs: [
        { file: 'a.jpg', jpeg: '/9j/4AAQ+=' },
        { file: 'b.jpg', jpeg: '"><script>' },
        { file: 'c.jpg', error: 'not a regular file' },
        { file: 'd.jpg', left_out: true },
      ],
    }),
    [
      { file: 'a.jpg', jpeg: '/9j/4AAQ+=' },
      { file: 'b.jpg' },
      { file: 'c.jpg', error: 'not a regular file' },
      { file: 'd.jpg', leftOut: true },
    ],
  );
});
