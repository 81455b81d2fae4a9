import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classifyPickOrder } from '../../../src/core/preview/checkpointOrder';

const ck = (file: string, order: number, best = false) => ({ file, order, best });

test('Classify offers the best checkpoint of the newest run first, then its others newest first, then older runs', () => {
  const picked = classifyPickOrder([
    { run: 'old', startedAt: 100, checkpoints: [ck('o-e1.ckpt', 0, true), ck('o-e2.ckpt', 1)] },
    {
      run: 'new',
      startedAt: 300,
      checkpoints: [ck('n-e1.ckpt', 0), ck('n-e2.ckpt', 1, true), ck('n-e3.ckpt', 2), ck('n-last.ckpt', 3)],
    },
    { run: 'empty', startedAt: 400, checkpoints: [] },
    { run: 'mid', startedAt: 200, checkpoints: [ck('m-e1.ckpt', 0)] },
  ]);
  assert.deepEqual(
    picked.map((p) => `${p.run}/${p.file}${p.best ? '*' : ''}`),
    [
      'new/n-e2.ckpt*',
      'new/n-last.ckpt',
      'new/n-e3.ckpt',
      'new/n-e1.ckpt',
      'mid/m-e1.ckpt',
      'old/o-e1.ckpt*',
      'old/o-e2.ckpt',
    ],
  );
});
