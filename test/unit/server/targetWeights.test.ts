// The server's memory of each SSH target's weights cache: one question per target at a time, an
// answer (or a failure) used for a minute before the target is asked again, nothing asked for this
// machine or an unknown target, and a malformed answer taken as no answer.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TargetWeightsStore } from '../../../src/server/targetWeights';
import type { SpecTargetInfo, WeightsStatusParams } from '../../../src/shared/specProtocol';

const BOX: SpecTargetInfo = { id: 'ssh:box', label: 'box', kind: 'ssh' };
const LISTING = {
  ok: true,
  sources: [{ source: 'mindcv:resnet18', path: '/c/r18.ckpt', state: 'cached', bytes: 46_800_000, partBytes: 0 }],
};

function store(answer: (p: WeightsStatusParams) => Promise<unknown>) {
  let clock = 0;
  const asked: string[] = [];
  const s = new TargetWeightsStore(
    (p) => {
      asked.push(p.targetId);
      return answer(p);
    },
    { ttlMs: 60_000, now: () => clock },
  );
  return { s, asked, advance: (ms: number) => (clock += ms) };
}

test('one question per target, its answer kept a minute, then asked again', async () => {
  const { s, asked, advance } = store(async () => LISTING);
  assert.deepEqual(s.view(BOX).unknown, { why: 'pending' });
  assert.ok(s.needsAsking(BOX));
  const a = s.ask(BOX);
  assert.equal(s.ask(BOX), a, 'a second completion meanwhile joins the question on its way');
  assert.ok(!s.needsAsking(BOX));
  await a;
  assert.deepEqual(asked, ['ssh:box']);
  assert.equal(s.view(BOX).entries?.get('mindcv:resnet18')?.state, 'cached');
  advance(59_000);
  assert.ok(!s.needsAsking(BOX), 'within the minute: no SSH call');
  advance(1_000);
  assert.ok(s.needsAsking(BOX));
  await s.ask(BOX);
  assert.deepEqual(asked, ['ssh:box', 'ssh:box']);
  // A copy or a download reached the box: asked again at once.
  s.forget(BOX.id);
  assert.ok(s.needsAsking(BOX));
});

test('a failure is remembered too (an unreachable box is not asked per keystroke), and said', async () => {
  const { s, asked, advance } = store(async () => {
    throw new Error('ssh: connect to host box port 22: Connection timed out');
  });
  await s.ask(BOX);
  assert.deepEqual(s.view(BOX).unknown, {
    why: 'failed',
    message: 'ssh: connect to host box port 22: Connection timed out',
  });
  assert.ok(!s.needsAsking(BOX));
  advance(60_000);
  assert.ok(s.needsAsking(BOX));
  assert.equal(asked.length, 1);
});

test('a malformed answer is no listing; this machine and unknown targets are never asked', async () => {
  const { s, asked } = store(async () => ({ ok: true, sources: [{ source: 'mindcv:resnet18', state: 'cached!' }] }));
  await s.ask(BOX);
  assert.equal(s.view(BOX).entries, undefined);
  assert.equal(s.view(BOX).unknown?.why, 'failed');
  const local: SpecTargetInfo = { id: 'local', label: 'this machine', kind: 'local' };
  const gone: SpecTargetInfo = { id: 'ssh:gone', label: 'ssh:gone', kind: 'unknown' };
  assert.ok(!s.needsAsking(local) && !s.needsAsking(gone));
  assert.deepEqual(s.view(gone).unknown, { why: 'unconfigured' });
  assert.deepEqual(s.view(local), { target: local });
  assert.deepEqual(asked, ['ssh:box']);
  s.clear();
  assert.ok(s.needsAsking(BOX), 'targets changed: asked afresh');
});
