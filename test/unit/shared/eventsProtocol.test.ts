import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isKnownEvent, isRunEvent } from '../../../src/shared/eventsProtocol';

test('isRunEvent accepts a valid envelope, known type or not', () => {
  assert.ok(isRunEvent({ v: 1, seq: 1, t: 1700000000.5, type: 'step', loss: 0.5 }));
  assert.ok(isRunEvent({ v: 2, seq: 7, t: 1, type: 'from_the_future', extra: [1] }));
});

test('isRunEvent rejects what cannot be sequenced', () => {
  for (const bad of [
    null,
    'x',
    [1],
    {},
    { seq: 1, t: 1, type: 'step' }, // no v
    { v: 1, seq: 0, t: 1, type: 'step' }, // seq starts at 1
    { v: 1, seq: 1.5, t: 1, type: 'step' },
    { v: 1, seq: '1', t: 1, type: 'step' },
    { v: 1, seq: 1, t: '1', type: 'step' },
    { v: 1, seq: 1, t: 1, type: '' },
    { v: 1, seq: 1, t: 1 },
    { error: { message: 'no such run' } },
  ]) {
    assert.equal(isRunEvent(bad), false, JSON.stringify(bad));
  }
});

test('isKnownEvent tells protocol types from newer ones', () => {
  assert.ok(isKnownEvent({ v: 1, seq: 1, t: 1, type: 'run_finished' }));
  assert.equal(isKnownEvent({ v: 1, seq: 1, t: 1, type: 'from_the_future' }), false);
});
