import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RunIndex, type KeyValueStore, type RunRecord } from '../../../src/core/runs/runIndex';

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
