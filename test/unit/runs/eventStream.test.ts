import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EventSequencer } from '../../../src/core/runs/eventStream';
import type { RunEvent } from '../../../src/shared/eventsProtocol';

const ev = (seq: number): RunEvent => ({ v: 1, seq, t: seq, type: 'step' }) as RunEvent;
const seqs = (s: EventSequencer, input: number[]) =>
  input
    .map(ev)
    .filter((e) => s.accept(e))
    .map((e) => e.seq);

test('in-order events pass and lastSeq follows them', () => {
  const s = new EventSequencer();
  assert.deepEqual(seqs(s, [1, 2, 3]), [1, 2, 3]);
  assert.equal(s.lastSeq, 3);
  assert.equal(s.gaps, 0);
});

test('duplicates and older events are dropped', () => {
  const s = new EventSequencer();
  assert.deepEqual(seqs(s, [1, 2, 2, 1, 3, 3]), [1, 2, 3]);
  assert.equal(s.lastSeq, 3);
});

test('a gap is reported and the later event still delivered', () => {
  const gaps: Array<[number, number]> = [];
  const s = new EventSequencer(0, (expected, got) => gaps.push([expected, got]));
  assert.deepEqual(seqs(s, [1, 2, 5, 6]), [1, 2, 5, 6]);
  assert.deepEqual(gaps, [[3, 5]]);
  assert.equal(s.gaps, 1);
});

test('reconnect with --since lastSeq: a resent tail is not doubled and nothing is lost', () => {
  const s = new EventSequencer();
  const delivered = seqs(s, [1, 2, 3, 4]); // first stream dies after 4
  const since = s.lastSeq;
  // The second stream starts at since+1; a sloppy transport may resend a little more.
  delivered.push(...seqs(s, [3, 4, 5, 6, 7]));
  assert.equal(since, 4);
  assert.deepEqual(delivered, [1, 2, 3, 4, 5, 6, 7]);
  assert.equal(s.gaps, 0);
});

test('starting from a known seq skips what the caller already has', () => {
  const s = new EventSequencer(10);
  assert.deepEqual(seqs(s, [9, 10, 11]), [11]);
});
