import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeListed } from '../../../src/core/runs/presentation';
import {
  parseListing,
  RunIndex,
  type KeyValueStore,
  type ListedRun,
  type RunRecord,
} from '../../../src/core/runs/runIndex';
import { runnerArgs, runRunner } from '../../../src/core/targets/runnerCli';

/** A Memento stand-in that stores JSON, as VS Code's does, so nothing survives by reference. */
class JsonStore implements KeyValueStore {
  data = new Map<string, string>();
  get<T>(k: string): T | undefined {
    const v = this.data.get(k);
    return v === undefined ? undefined : (JSON.parse(v) as T);
  }
  async update(k: string, v: unknown): Promise<void> {
    this.data.set(k, JSON.stringify(v));
  }
}

const rec = (runId: string, startedAt: number, extra: Partial<RunRecord> = {}): RunRecord => ({
  targetId: 'local',
  runId,
  runDir: `/runs/${runId}`,
  state: 'running',
  startedAt,
  lastSeq: 0,
  ...extra,
});

test('records survive a reload (a new index over the same store), newest first', async () => {
  const store = new JsonStore();
  const a = new RunIndex(store);
  await a.upsert(rec('old', 100, { state: 'completed' }));
  await a.upsert(rec('new', 200, { lastSeq: 42 }));
  await a.upsert(rec('gpu-box-run', 150, { targetId: 'ssh:box' }));
  const b = new RunIndex(store);
  assert.deepEqual(
    b.all().map((r) => r.runId),
    ['new', 'gpu-box-run', 'old'],
  );
  assert.equal(b.get('local', 'new')?.lastSeq, 42);
  assert.deepEqual(
    b.live().map((r) => r.runId),
    ['new', 'gpu-box-run'],
  );
  assert.deepEqual([...b.byTarget().keys()], ['local', 'ssh:box']);
});

test('the stream position never goes backwards', async () => {
  const idx = new RunIndex(new JsonStore());
  await idx.upsert(rec('r', 1, { lastSeq: 10 }));
  await idx.progress('local', 'r', 25, 'epoch 1/3');
  await idx.upsert(rec('r', 1, { lastSeq: 5 }));
  assert.equal(idx.get('local', 'r')?.lastSeq, 25);
  assert.equal(idx.get('local', 'r')?.description, 'epoch 1/3');
});

test("a target's ls is the truth for that target only", async () => {
  const idx = new RunIndex(new JsonStore());
  await idx.upsert(rec('kept', 100, { lastSeq: 7 }));
  await idx.upsert(rec('deleted-there', 110));
  await idx.upsert(rec('elsewhere', 120, { targetId: 'ssh:box' }));
  await idx.mergeListing('local', [
    { run_id: 'kept', run_dir: '/runs/kept', state: 'lost', started_at: 100 },
    {
      run_id: 'found',
      run_dir: '/runs/found',
      state: 'completed',
      started_at: 130,
      name: 'found',
      backbone: 'resnet50',
    },
  ]);
  assert.deepEqual(
    idx.all().map((r) => `${r.targetId}/${r.runId}/${r.state}`),
    ['local/found/completed', 'ssh:box/elsewhere/running', 'local/kept/lost'],
  );
  assert.equal(idx.get('local', 'kept')?.lastSeq, 7, 'the stream position is kept');
  assert.equal(idx.get('local', 'found')?.backbone, 'resnet50');
});

test("a multi-node run: another node's part is not a run of that target, and ls keeps the master's nodes", async () => {
  const idx = new RunIndex(new JsonStore());
  const nodes = [{ targetId: 'ssh:npu-b', runDir: '/runs/r2' }];
  await idx.upsert(rec('r2', 100, { targetId: 'ssh:npu-a', nodes, resumedFrom: 'r1-e1-s4.ckpt' }));
  await idx.mergeListing('ssh:npu-a', [{ run_id: 'r2', run_dir: '/runs/r2', state: 'completed', started_at: 100 }]);
  await idx.mergeListing('ssh:npu-b', [
    { run_id: 'r2', run_dir: '/runs/r2', state: 'completed', started_at: 101, node_rank: 1 },
    { run_id: 'own', run_dir: '/runs/own', state: 'completed', started_at: 90 },
  ]);
  assert.deepEqual(
    idx.all().map((r) => `${r.targetId}/${r.runId}`),
    ['ssh:npu-a/r2', 'ssh:npu-b/own'],
  );
  assert.deepEqual(idx.get('ssh:npu-a', 'r2')?.nodes, nodes);
  assert.equal(idx.get('ssh:npu-a', 'r2')?.resumedFrom, 'r1-e1-s4.ckpt', 'what only the extension knows survives ls');
});

test('garbage in the store is dropped, not fatal', () => {
  const store = new JsonStore();
  store.data.set('ascend.runIndex.v1', JSON.stringify([null, { nope: 1 }, rec('ok', 1)]));
  assert.deepEqual(
    new RunIndex(store).all().map((r) => r.runId),
    ['ok'],
  );
});

// `ls` output whose runs have fields of the wrong types, as a broken or hostile runner could print.
const BAD_LS = {
  root: '/runs',
  runs: [
    { run_id: 'ok', run_dir: '/runs/ok', state: 'completed', started_at: 5, epoch: 2, epochs: 3, loss: 0.25 },
    { run_id: 'odd', run_dir: '/runs/odd', state: 'running', pid: '12', started_at: 'today', spec: [1] },
    { run_id: 'big', run_dir: '/runs/big', state: 'lost', pid: 1e20, checkpoints: 5, best: 5 },
    { run_id: 'num', run_dir: '/runs/num', state: 'failed', epoch: { toString: 1, valueOf: 1 }, loss: 'x' },
    { run_id: 7, run_dir: '/runs/7', state: 'completed' },
    { run_id: 'st', run_dir: '/runs/st', state: 'exploded' },
    null,
    [1],
  ],
};

test('ls output of the wrong types: bad runs skipped, bad fields dropped, a warning for each', async () => {
  const { runs, warnings } = parseListing(BAD_LS);
  assert.deepEqual(
    runs.map((r) => r.run_id),
    ['ok', 'odd', 'big', 'num'],
  );
  const odd = runs[1] as ListedRun & Record<string, unknown>;
  assert.equal(odd.pid, undefined);
  assert.equal(odd.started_at, undefined);
  assert.equal((runs[2] as ListedRun & Record<string, unknown>).pid, undefined, '1e20 is no pid');
  assert.equal(warnings.length, 6 + 4, warnings.join('\n'));
  // What the Runs view then does with them must not throw.
  for (const r of runs) describeListed(r);
  assert.equal(describeListed(runs[0]), 'epoch 2/3 · loss 0.250');
  const index = new RunIndex(new JsonStore());
  await index.mergeListing('box', BAD_LS.runs as unknown as ListedRun[]);
  assert.deepEqual(
    index.all().map((r) => [r.runId, r.startedAt]),
    [
      ['ok', 5],
      ['big', 0],
      ['num', 0],
      ['odd', 0],
    ],
  );
  assert.deepEqual(parseListing({ runs: 'x' }).runs, []);
  assert.deepEqual(parseListing(null), { runs: [], warnings: [] });
});

test('runRunner checks ls output at the boundary: the caller gets only runs of the right types', async () => {
  const script = `process.stdout.write(${JSON.stringify(JSON.stringify(BAD_LS))})`;
  const out = await runRunner<{ runs: ListedRun[]; skipped: string[] }>(
    { python: process.execPath, launcher: ['-e', script] },
    runnerArgs.ls('/runs'),
  );
  assert.deepEqual(
    out.runs.map((r) => r.run_id),
    ['ok', 'odd', 'big', 'num'],
  );
  assert.equal(out.skipped.length, 10);
  for (const r of out.runs) describeListed(r);
});

test("ls's problem, health and meta reach the index; a bad run is listed, never hides the good ones", async () => {
  const index = new RunIndex(new JsonStore());
  const out = parseListing({
    runs: [
      { run_id: 'bad', run_dir: '/runs/bad', state: 'lost', problem: 'status.json is not a regular file' },
      {
        run_id: 'good',
        run_dir: '/runs/good',
        state: 'completed',
        started_at: 10,
        name: 'exp',
        problem: null,
        health: { verdict: 'problems', reasons: [{ code: 'loss_rose', message: 'rose', fix: 'lower lr' }] },
        meta: { name: 'baseline', notes: 'n', tags: ['a', 5], updated_at: 1 },
        display_name: 'baseline',
      },
      { run_id: 'odd', run_dir: '/runs/odd', state: 'completed', problem: 7, health: 'x', meta: [] },
    ],
  });
  assert.deepEqual(
    out.runs.map((r) => r.run_id),
    ['bad', 'good', 'odd'],
  );
  assert.equal(out.warnings.length, 3, 'the wrong-typed problem, health and meta of "odd" are dropped, each said');
  await index.mergeListing('local', out.runs);
  assert.equal(index.get('local', 'bad')?.problem, 'status.json is not a regular file');
  assert.equal(index.get('local', 'bad')?.state, 'lost');
  const good = index.get('local', 'good');
  assert.equal(good?.problem, undefined);
  assert.equal(good?.health?.verdict, 'problems');
  assert.deepEqual(good?.meta, { name: 'baseline', notes: 'n', tags: ['a'] });
  await index.annotate('local', 'good', { meta: { name: null, notes: '', tags: [] } });
  assert.deepEqual(index.get('local', 'good')?.meta, { name: null, notes: '', tags: [] });
});
