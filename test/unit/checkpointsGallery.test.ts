// The explorer host's gallery (src/vscode/checkpoints/gallery.ts): which images it asks the target
// for (a cell's, the first GALLERY_ITEMS, the most confident first), from which folder, and how a
// missing thumbnail is worded; when two evaluations cannot be compared by predictions.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { toEvalResult } from '../../src/core/checkpoints/client';
import {
  cannotCompare,
  GALLERY_ITEMS,
  galleryView,
  predictionsCompareView,
} from '../../src/vscode/checkpoints/gallery';

const evalOf = (data: string, n: number, flip = false) =>
  toEvalResult({
    classes: ['cat', 'dog'],
    data,
    confusion: [
      [0, n],
      [0, 0],
    ],
    // n cats, all taken for dogs, confidence rising with the index (the second eval gets them right)
    predictions: Array.from({ length: n }, (_, i) => ({
      file: `cat/${i}.jpg`,
      label: 0,
      top: [[flip ? 0 : 1, 0.5 + i / (2 * n)]],
    })),
    predictions_kept: { total: n, kept: n, all: true },
  });

test('a cell asks the eval data folder for its first images, the most confident first', async () => {
  const asked: { root: string; files: string[] }[] = [];
  const thumbs = async (root: string, files: string[]) => {
    asked.push({ root, files });
    return files.map((f, i) =>
      i === 1
        ? { file: f, error: 'not a regular file' }
        : i === 2
          ? { file: f, leftOut: true }
          : { file: f, jpeg: 'AAAA' },
    );
  };
  const g = await galleryView('checkpoints/a.ckpt', evalOf('/data/val', 60), { kind: 'cell', row: 0, col: 1 }, thumbs);
  assert.equal(asked.length, 1);
  assert.equal(asked[0].root, '/data/val');
  assert.equal(asked[0].files.length, GALLERY_ITEMS);
  assert.deepEqual(asked[0].files.slice(0, 2), ['cat/59.jpg', 'cat/58.jpg']);
  assert.equal(g.count, 60);
  assert.equal(g.recorded, 60);
  assert.deepEqual(
    g.items.slice(0, 3).map((i) => [i.thumb, i.thumbError]),
    [
      ['AAAA', null],
      [null, 'not a regular file'],
      [null, 'over the size budget'],
    ],
  );
  const empty = await galleryView(
    'checkpoints/a.ckpt',
    evalOf('/data/val', 5),
    { kind: 'cell', row: 1, col: 0 },
    thumbs,
  );
  assert.equal(empty.items.length, 0);
  assert.equal(asked.length, 1, 'an empty cell asks the target for nothing');
});

test('compare by predictions needs both evaluated, with predictions, on the same folder', async () => {
  const a = evalOf('/data/val', 4);
  assert.match(cannotCompare('c/a.ckpt', 'c/b.ckpt', a, undefined) ?? '', /Evaluate b\.ckpt first/);
  assert.match(
    cannotCompare('c/a.ckpt', 'c/b.ckpt', a, evalOf('/other', 4)) ?? '',
    /on \/data\/val and b\.ckpt on \/other/,
  );
  const b = evalOf('/data/val', 4, true);
  assert.equal(cannotCompare('c/a.ckpt', 'c/b.ckpt', a, b), undefined);
  const v = await predictionsCompareView('c/a.ckpt', 'c/b.ckpt', a, b, async (_root, files) =>
    files.map((file) => ({ file, jpeg: 'AAAA' })),
  );
  assert.equal(v.accuracyA, 0);
  assert.equal(v.accuracyB, 1);
  assert.equal(v.fixed, 4);
  assert.deepEqual(v.perClass[0], { class: 'cat', recallA: 0, recallB: 1, support: 4 });
});
