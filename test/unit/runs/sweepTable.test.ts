// The Runs Table of one sweep: only the runs tagged with that sweep, the trial number and the
// sweep's space as columns (a space field shows even while every trial so far has the same value),
// rows best-first by the objective, and the sort the user picks kept when the objective arrives.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ListedRunDetail } from '../../../src/core/runs/presentation';
import { RunsTableModel } from '../../../src/core/runs/tableModel';

const SWEEP = '20261203-150301-lr-freeze-3115';

const run = (id: string, tags: string[], lr: number, freeze: string, acc: number, loss: number): ListedRunDetail => ({
  run_id: id,
  run_dir: `/runs/${id}`,
  state: 'completed',
  started_at: 1000,
  ended_at: 1100,
  meta: { tags },
  spec_fields: { name: id, 'train.lr': lr, 'model.freeze': freeze, 'train.epochs': 2, 'data.image_size': 32 },
  summary: { best_val_acc: acc, final_val_acc: acc, best_val_loss: loss, duration_s: 60, epochs_done: 2 },
});

const listing = [
  {
    targetId: 'local',
    targetLabel: 'this machine',
    runs: [
      run(`${SWEEP}-t0`, [`sweep:${SWEEP}`, 'trial:0'], 0.1, 'none', 0.575, 0.9),
      run(`${SWEEP}-t1`, [`sweep:${SWEEP}`, 'trial:1'], 0.001, 'none', 0.8, 0.5),
      run(`${SWEEP}-t2`, [`sweep:${SWEEP}`, 'trial:2'], 1.0, 'none', 0.25, 2.1),
      // Another sweep's trial and a plain run that differ in every way: not in this table.
      run('other-t0', ['sweep:other', 'trial:0'], 0.5, 'backbone', 0.9, 0.1),
      { ...run('plain', [], 0.01, 'up_to:layer3', 0.95, 0.05), spec_fields: { 'train.epochs': 9 } },
    ],
  },
];

test("a sweep's table lists its trials only, with the trial and the space's fields as columns, best first", () => {
  const m = new RunsTableModel('Runs Table: sweep lr-freeze', false, {
    sweepId: SWEEP,
    space: ['train.lr', 'model.freeze'],
    objective: { metric: 'best_val_acc', direction: 'maximize' },
  });
  m.setListings(listing, [], 2000);
  const s = m.snapshot();
  assert.equal(s.total, 3);
  assert.deepEqual(
    s.rows.map((r) => r.runId),
    [`${SWEEP}-t1`, `${SWEEP}-t0`, `${SWEEP}-t2`],
  );
  assert.deepEqual(
    s.rows.map((r) => r.values.trial),
    [1, 0, 2],
  );
  const keys = s.columns.map((c) => c.key);
  // model.freeze is the same in all three trials, but it is searched: a column all the same.
  assert.ok(keys.includes('spec:train.lr') && keys.includes('spec:model.freeze'), keys.join(' '));
  assert.ok(keys.includes('trial') && !keys.includes('tags'), keys.join(' '));
  assert.ok(!keys.includes('spec:train.epochs'), 'a field no trial differs in and not searched stays hidden');
  // The columns do not repeat when a space field also differs.
  assert.equal(keys.length, new Set(keys).size);
  // The other sweep's tag and the plain run's fields are not among the filter's or columns' choices.
  assert.deepEqual(s.tags, [`sweep:${SWEEP}`, 'trial:0', 'trial:1', 'trial:2']);
});

test("a minimised objective sorts lowest first; a sort the user chose stays when the sweep's objective arrives", () => {
  const loss = new RunsTableModel('t', false, {
    sweepId: SWEEP,
    space: ['train.lr'],
    objective: { metric: 'best_val_loss', direction: 'minimize' },
  });
  loss.setListings(listing, [], 2000);
  assert.deepEqual(
    loss.snapshot().rows.map((r) => r.values.trial),
    [1, 0, 2],
  );

  // Opened before sweep-status answered: by trial number, until the objective is known...
  const m = new RunsTableModel('t', false, { sweepId: SWEEP, space: [] });
  m.setListings(listing, [], 2000);
  assert.deepEqual(
    m.snapshot().rows.map((r) => r.values.trial),
    [0, 1, 2],
  );
  m.setSweepScope({
    sweepId: SWEEP,
    space: ['train.lr'],
    objective: { metric: 'best_val_acc', direction: 'maximize' },
  });
  assert.deepEqual(
    m.snapshot().rows.map((r) => r.values.trial),
    [1, 0, 2],
  );
  // ...and a column the user sorted by is kept over the objective.
  m.handle({ type: 'sort', key: 'spec:train.lr' });
  m.setSweepScope({
    sweepId: SWEEP,
    space: ['train.lr'],
    objective: { metric: 'best_val_acc', direction: 'maximize' },
  });
  assert.deepEqual(
    m.snapshot().rows.map((r) => r.values['spec:train.lr']),
    [0.001, 0.1, 1.0],
  );
});

test('the table of every run still has no Trial column', () => {
  const m = new RunsTableModel('t', false);
  m.setListings(listing, [], 2000);
  const s = m.snapshot();
  assert.equal(s.total, 5);
  assert.ok(!s.choices.some((c) => c.key === 'trial'));
});
