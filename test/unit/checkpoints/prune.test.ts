import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseManifest, type CheckpointEntry } from '../../../src/core/checkpoints/manifest';
import { deletePlan, listForConfirmation, prunePlan } from '../../../src/core/checkpoints/prune';

function entries(n: number, bestAt?: number): CheckpointEntry[] {
  const list = Array.from({ length: n }, (_, i) => ({
    file: `checkpoints/r-e${i + 1}-s${3 * (i + 1)}.ckpt`,
    epoch: i + 1,
    step: 3 * (i + 1),
    metrics: { val_acc: i / 10 },
    best: i === bestAt,
  }));
  return parseManifest(JSON.stringify(list)).entries;
}
const names = (files: string[]) => files.map((f) => f.replace(/^checkpoints\/r-/, '').replace(/\.ckpt$/, ''));

test('keep best + newest N: the best is kept wherever it is; the rest goes oldest first', () => {
  const p = prunePlan(entries(6, 1), 2);
  assert.deepEqual(names(p.keep), ['e6-s18', 'e5-s15', 'e2-s6']);
  assert.deepEqual(names(p.drop), ['e1-s3', 'e3-s9', 'e4-s12']);
});

test('the best is never in a prune, even with N = 0; a best among the newest is not counted twice', () => {
  assert.deepEqual(names(prunePlan(entries(4, 0), 0).keep), ['e1-s3']);
  const p = prunePlan(entries(4, 3), 2);
  assert.deepEqual(names(p.keep), ['e4-s12', 'e3-s9']);
  assert.deepEqual(names(p.drop), ['e1-s3', 'e2-s6']);
});

test('nothing to drop when N covers every checkpoint; no best means only the newest N stay', () => {
  assert.deepEqual(prunePlan(entries(3, 0), 5).drop, []);
  assert.deepEqual(names(prunePlan(entries(3), 1).drop), ['e1-s3', 'e2-s6']);
  assert.throws(() => prunePlan(entries(3), -1), /keep newest/);
  assert.throws(() => prunePlan(entries(3), 1.5), /keep newest/);
});

test('newest is saving order, not the step number (a resume can re-save an older step later)', () => {
  const list = parseManifest(
    JSON.stringify([
      { file: 'checkpoints/b.ckpt', step: 9 },
      { file: 'checkpoints/a.ckpt', step: 3 },
    ]),
  ).entries;
  assert.deepEqual(prunePlan(list, 1).keep, ['checkpoints/a.ckpt']);
});

test('delete: the best needs its own confirmation; a live run keeps its newest; unknown names are refused', () => {
  const list = entries(4, 1);
  const plan = deletePlan(
    list,
    [list[0].file, list[1].file, list[3].file, 'checkpoints/other.ckpt', list[0].file],
    true,
  );
  assert.deepEqual(names(plan.plain), ['e1-s3']);
  assert.equal(plan.best, list[1].file);
  assert.deepEqual(
    plan.refused.map((r) => names([r.file])[0]),
    ['e4-s12', 'checkpoints/other'],
  );
  assert.deepEqual(
    names(deletePlan(list, [list[3].file], false).plain),
    ['e4-s12'],
    'a finished run may lose its newest',
  );
});

test('the confirmation lists what goes with epoch, step and accuracy', () => {
  const list = entries(2, 1);
  assert.deepEqual(listForConfirmation(list, [list[0].file, list[1].file]), [
    'r-e1-s3.ckpt (epoch 1, step 3, val acc 0.0%)',
    'r-e2-s6.ckpt (epoch 2, step 6, val acc 10.0%, BEST)',
  ]);
});
