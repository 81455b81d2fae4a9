// The sweep client's checks on recorded real outputs (test/unit/fixtures/sweeps: a 4-trial random
// sweep of the demo shapes on CPU, 3 completed and 1 pruned), and the grouping of trial runs under
// their sweep in the Runs view.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { parseListing, RunIndex } from '../../../src/core/runs/runIndex';
import { sweepArgs, SweepOutputError, toSweepListing, toSweepStatus } from '../../../src/core/sweeps/client';
import { groupRuns, sweepDescription, summaryOf } from '../../../src/core/sweeps/grouping';
import { sweepFileBeside, sweepTemplate } from '../../../src/core/sweeps/template';
import { translator } from '../../../src/shared/l10n';

const fixture = (f: string) =>
  JSON.parse(readFileSync(path.join(__dirname, '..', 'fixtures', 'sweeps', f), 'utf8')) as Record<string, unknown>;
const SWEEP = '20261203-153147-fx-f3a9';

test('sweep-status of a real sweep reads as typed: trials, best, importances', () => {
  const s = toSweepStatus(fixture('sweep-status.json'));
  assert.equal(s.sweep_id, SWEEP);
  assert.equal(s.state, 'completed');
  assert.deepEqual(s.objective, { metric: 'best_val_acc', direction: 'maximize' });
  assert.equal(s.trials.length, 4);
  assert.deepEqual(s.counts, { complete: 3, pruned: 1, fail: 0, running: 0, waiting: 0, counted: 4 });
  const pruned = s.trials.filter((t) => t.state === 'PRUNED');
  assert.equal(pruned.length, 1);
  assert.equal(pruned[0].value, null);
  assert.equal(typeof pruned[0].pruned_at, 'number');
  assert.equal(s.best?.number, 2);
  assert.equal(s.best?.run_id, `${SWEEP}-t2`);
  assert.deepEqual(Object.keys(s.importances ?? {}).sort(), ['model.freeze', 'train.lr']);
  for (const t of s.trials) assert.ok(t.reported.every(([e]) => Number.isInteger(e)));
});

test('sweep-status of another shape is refused naming the field', () => {
  const good = fixture('sweep-status.json');
  const trials = good.trials as Record<string, unknown>[];
  assert.throws(
    () => toSweepStatus({ ...good, trials: [{ ...trials[0], state: 'DONE' }] }),
    (e: unknown) => e instanceof SweepOutputError && /trials\[0\]\.state/.test(e.message),
  );
  assert.throws(
    () => toSweepStatus({ ...good, objective: { metric: 'best_val_acc', direction: 'up' } }),
    /objective\.direction/,
  );
  assert.throws(
    () => toSweepStatus({ ...good, counts: { ...(good.counts as object), counted: '4' } }),
    /counts\.counted/,
  );
  assert.throws(() => toSweepStatus({ ...good, best: { ...(good.best as object), value: 'high' } }), /best\.value/);
  // importances are optional: a bad one reads as none rather than breaking the panel
  assert.equal(toSweepStatus({ ...good, importances: { 'train.lr': 'x' } }).importances, null);
});

test('sweep-ls: a sweep of the wrong shape is skipped with a warning, the others kept', () => {
  const good = fixture('sweep-ls.json');
  const [one] = good.sweeps as Record<string, unknown>[];
  const { sweeps, warnings } = toSweepListing({ ...good, sweeps: [one, { ...one, state: 'sleeping' }] });
  assert.equal(sweeps.length, 1);
  assert.equal(sweeps[0].trials_target, 4);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /sweeps\[1\]\.state/);
  assert.throws(() => toSweepListing({ root: '/x' }), /sweeps/);
});

test('sweep argv: paths that look like options stay operands', () => {
  assert.deepEqual(sweepArgs.start('-a.ascend-sweep.yaml', '/r'), [
    'sweep',
    './-a.ascend-sweep.yaml',
    '--root',
    '/r',
    '--detach',
  ]);
  assert.deepEqual(sweepArgs.stop('/r/sweeps/x', true, 30), [
    'sweep-stop',
    '/r/sweeps/x',
    '--drain',
    '--timeout',
    '30',
  ]);
});

test('trial runs are grouped under their sweep, by trial number; other runs stay at the top', async () => {
  const store = new Map<string, unknown>();
  const index = new RunIndex({
    get: <T>(k: string) => store.get(k) as T,
    update: async (k, v) => void store.set(k, v),
  });
  const ls = fixture('ls.json');
  const other = { run_id: 'lone', run_dir: '/tmp/sw/runs/lone', state: 'completed', started_at: 1, meta: null };
  await index.mergeListing('local', parseListing({ runs: [...(ls.runs as object[]), other] }).runs);
  const listed = toSweepListing(fixture('sweep-ls.json')).sweeps;
  const top = groupRuns(index.byTarget().get('local') ?? [], listed);
  assert.deepEqual(
    top.map((t) => t.kind),
    ['sweep', 'run'],
  );
  assert.ok(top[0].kind === 'sweep');
  const g = top[0].group;
  assert.deepEqual(
    g.trials.map((r) => r.runId),
    [0, 1, 2, 3].map((n) => `${SWEEP}-t${n}`),
  );
  assert.equal(sweepDescription(g), 'completed · 4/4 trials · best val acc 1 (t2)');
  // in zh-cn the row's words are Chinese; the metric stays its name
  const zh = translator(JSON.parse(readFileSync(path.join(__dirname, '../../../l10n/bundle.l10n.zh-cn.json'), 'utf8')));
  assert.equal(sweepDescription(g, zh), '已完成 · 4/4 个试验 · 最佳 val acc 1（试验 2）');
  // before sweep-ls has answered, the trials still gather under a row named by the sweep id
  const unlisted = groupRuns(index.byTarget().get('local') ?? [], []);
  assert.ok(unlisted[0].kind === 'sweep' && unlisted[0].group.sweep === null && unlisted[0].group.trials.length === 4);
  assert.equal(sweepDescription(unlisted[0].group), '4 trials');
  assert.equal(sweepDescription(unlisted[0].group, zh), '4 个试验');
  // a running sweep shows sweep-status's counts and best
  const status = toSweepStatus(fixture('sweep-status.json'));
  const running = summaryOf(
    { ...listed[0], state: 'running', counts: null, best: null },
    { ...status, state: 'running' },
  );
  assert.match(sweepDescription({ ...g, sweep: running }), /^running · 4\/4 trials · best val acc 1/);
  // a listed sweep with no start time and no trials sorts last, not first
  const unstarted = { ...listed[0], sweep_id: 'never', name: 'never', state: 'lost' as const, started_at: null };
  const order = groupRuns(index.byTarget().get('local') ?? [], [...listed, unstarted]);
  assert.deepEqual(
    order.map((t) => (t.kind === 'sweep' ? t.group.sweepId : t.record.runId)),
    [listed[0].sweep_id, 'lone', 'never'],
  );
});

test('a new sweep spec sits beside its run spec and names it as base', () => {
  assert.equal(sweepFileBeside('/w/resnet.ascend.yaml'), '/w/resnet.ascend-sweep.yaml');
  const text = sweepTemplate('./resnet.ascend.yaml', 'resnet');
  assert.match(text, /^base: "\.\/resnet\.ascend\.yaml"$/m);
  assert.match(text, /train\.lr: \{low: 1\.0e-4, high: 1\.0e-1, log: true\}/);
});
