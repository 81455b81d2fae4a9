import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ListedRunDetail } from '../../../src/core/runs/presentation';
import { parseListing } from '../../../src/core/runs/runIndex';
import { filterRuns, sortRuns, tableRuns, type TableRun } from '../../../src/core/runs/table';
import { RunsTableModel } from '../../../src/core/runs/tableModel';
import type { TableFilter } from '../../../src/shared/runsTableProtocol';

const spec = (lr: number, freeze: string) => ({
  name: 'flowers',
  'data.image_size': 32,
  'model.freeze': freeze,
  'train.lr': lr,
  'device.ids': '[0]',
});
const listed = (id: string, over: Partial<ListedRunDetail> & Record<string, unknown>): ListedRunDetail => ({
  run_id: id,
  run_dir: `/runs/${id}`,
  state: 'completed',
  started_at: 1000,
  ended_at: 1100,
  ...over,
});
const summary = (acc: number, loss: number, rate: number, skipped = 0) => ({
  best_val_acc: acc,
  final_val_acc: acc - 0.05,
  best_val_loss: loss,
  img_per_s: rate,
  skipped_updates: skipped,
  epochs_done: 3,
  duration_s: 90,
});

const runsA = [
  listed('a-0001', {
    display_name: 'lr high',
    started_at: 1000,
    summary: summary(0.6, 0.9, 120),
    spec_fields: spec(0.1, 'none'),
    meta: { tags: ['baseline'] },
  }),
  listed('b-0002', {
    display_name: 'lr low',
    started_at: 2000,
    summary: summary(0.8, 0.5, 80, 4),
    spec_fields: spec(0.001, 'backbone'),
    meta: { tags: ['sweep', 'best'] },
  }),
  listed('c-0003', {
    display_name: 'old run',
    started_at: 500,
    ended_at: 600,
    // a run from before summary.json: no summary, its best checkpoint's accuracy
    best: { metrics: { val_acc: 0.7 } },
    spec_fields: spec(0.01, 'none'),
  }),
  listed('d-0004', {
    display_name: 'live',
    state: 'running',
    started_at: 3000,
    ended_at: null,
    summary: { ...summary(0.3, 1.5, 200), updated_at: 3050, duration_s: 50 },
    spec_fields: spec(0.01, 'none'),
  }),
];
const rows = () => tableRuns([{ targetId: 'local', targetLabel: 'this machine', runs: runsA }], 3100);
const names = (rs: TableRun[]) => rs.map((r) => r.name);
const none: TableFilter = { text: '', tags: [], states: [], ranges: [] };

test('rows carry the summary, fall back for old runs, and time a live run to now', () => {
  const [a, b, c, d] = rows();
  assert.equal(a.fixed.best_val_acc, 0.6);
  assert.equal(b.fixed.skipped_updates, 4);
  assert.equal(c.fixed.best_val_acc, 0.7, "an old run shows its best checkpoint's accuracy");
  assert.equal(c.fixed.final_val_acc, null);
  assert.equal(c.fixed.duration_s, 100, 'without a summary: ended - started');
  assert.equal(d.fixed.duration_s, 100, "a live run: the summary's 50 s plus the 50 s since its update");
  assert.deepEqual(b.tags, ['sweep', 'best']);
  assert.equal(b.spec['train.lr'], 0.001);
});

test('sort by a result column puts the best first and runs without a value last, either way', () => {
  const desc = sortRuns(rows(), { key: 'final_val_acc', dir: 'desc' });
  assert.deepEqual(names(desc), ['lr low', 'lr high', 'live', 'old run']);
  const asc = sortRuns(rows(), { key: 'final_val_acc', dir: 'asc' });
  assert.deepEqual(names(asc), ['live', 'lr high', 'lr low', 'old run']);
  assert.deepEqual(names(sortRuns(rows(), { key: 'spec:train.lr', dir: 'asc' })), [
    'lr low',
    'live', // equal lr 0.01: newest first
    'old run',
    'lr high',
  ]);
  assert.deepEqual(names(sortRuns(rows(), { key: 'name', dir: 'asc' })), ['live', 'lr high', 'lr low', 'old run']);
});

test('filters: text words, tags, states and numeric ranges combine', () => {
  const f = (over: Partial<TableFilter>) => names(filterRuns(rows(), { ...none, ...over }));
  assert.deepEqual(f({ text: 'LR' }), ['lr high', 'lr low']);
  assert.deepEqual(f({ text: 'model.freeze=backbone' }), ['lr low'], 'spec values are searchable as key=value');
  assert.deepEqual(f({ text: 'freeze=backbone' }), ['lr low'], 'the key may leave out its section');
  assert.deepEqual(f({ text: 'lr=0.01' }), ['old run', 'live'], 'the value is whole: 0.01 is not 0.1 or 0.001');
  assert.deepEqual(f({ text: 'backbone' }), ['lr low'], 'a plain word finds spec values too');
  assert.deepEqual(f({ text: 'lr sweep' }), ['lr low'], 'every word must match');
  assert.deepEqual(f({ tags: ['baseline', 'best'] }), ['lr high', 'lr low']);
  assert.deepEqual(f({ states: ['running'] }), ['live']);
  assert.deepEqual(f({ ranges: [{ key: 'best_val_acc', min: 0.65, max: null }] }), ['lr low', 'old run']);
  assert.deepEqual(f({ ranges: [{ key: 'spec:train.lr', min: 0.005, max: 0.05 }] }), ['old run', 'live']);
  assert.deepEqual(
    f({ ranges: [{ key: 'final_val_acc', min: 0, max: 1 }] }),
    ['lr high', 'lr low', 'live'],
    'a range leaves out runs without a value',
  );
});

test('the model shows the differing spec fields as columns, follows the filter, and diffs the selection', () => {
  const model = new RunsTableModel('Runs on this machine', false);
  model.setListings([{ targetId: 'local', targetLabel: 'this machine', runs: runsA }], [], 3100);
  let s = model.snapshot();
  const specCols = s.columns.filter((c) => c.spec).map((c) => c.key);
  assert.deepEqual(specCols, ['spec:model.freeze', 'spec:train.lr'], 'only the fields that differ');
  assert.ok(!s.columns.some((c) => c.key === 'target'), 'one target: no Target column');
  assert.ok(
    s.choices.some((c) => c.key === 'spec:data.image_size' && !c.shown),
    'the rest one click away',
  );

  model.handle({ type: 'filter', filter: { ...none, states: ['completed'], text: 'none' } });
  s = model.snapshot();
  assert.deepEqual(
    s.rows.map((r) => r.values.name),
    ['lr high', 'old run'],
  );
  assert.deepEqual(
    s.columns.filter((c) => c.spec).map((c) => c.key),
    ['spec:train.lr'],
    'among the listed runs only lr differs now',
  );

  model.handle({ type: 'sort', key: 'spec:train.lr' });
  assert.deepEqual(
    model.snapshot().rows.map((r) => r.values['spec:train.lr']),
    [0.01, 0.1],
  );
  model.handle({ type: 'sort', key: 'spec:train.lr' });
  assert.deepEqual(
    model.snapshot().rows.map((r) => r.values['spec:train.lr']),
    [0.1, 0.01],
  );

  const ids = model.snapshot().rows.map((r) => r.id);
  model.handle({ type: 'select', ids: [...ids, 'local\u0000not-a-run'] });
  assert.deepEqual(model.snapshot().selected, ids, 'unknown ids are dropped');
  model.handle({ type: 'diff', onlyDiffering: false });
  const diff = model.snapshot().diff;
  assert.ok(diff);
  assert.deepEqual(
    diff.runs.map((r) => r.name),
    ['lr high', 'old run'],
  );
  assert.deepEqual(
    diff.rows.find((r) => r.key === 'train.lr'),
    { key: 'train.lr', values: ['0.1', '0.01'], differs: true },
  );
  assert.equal(diff.rows.find((r) => r.key === 'model.freeze')?.differs, false);

  const compare = model.handle({ type: 'compare' });
  assert.equal(compare.type, 'compare');
  model.handle({ type: 'filter', filter: none });
  model.handle({ type: 'select', ids: [ids[0], 'local\u0000d-0004'] });
  const del = model.handle({ type: 'delete' });
  assert.ok(del.type === 'delete');
  assert.deepEqual(
    del.runs.map((r) => r.runId),
    ['a-0001'],
    'a live run is never handed to delete',
  );
});

test('ls output with summary and spec_fields of the wrong type keeps the run and drops the fields', () => {
  const { runs, warnings } = parseListing({
    runs: [{ run_id: 'x', run_dir: '/r/x', state: 'completed', summary: 'fast', spec_fields: [1] }],
  });
  assert.equal(runs.length, 1);
  assert.equal(runs[0].summary, undefined);
  assert.equal(runs[0].spec_fields, undefined);
  assert.equal(warnings.length, 2);
  const [row] = tableRuns([{ targetId: 't', targetLabel: 't', runs }], 0);
  assert.equal(row.fixed.best_val_acc, null);
  assert.deepEqual(row.spec, {});
});
