import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatCell, validateTableMessage } from '../../../src/shared/runsTableProtocol';

const none = { text: '', tags: [], states: [], ranges: [] };

test('the UI messages the host takes are copied into fresh objects', () => {
  const filter = {
    text: 'lr=0.01',
    tags: ['a'],
    states: ['completed'],
    ranges: [{ key: 'best_val_acc', min: 0.5, max: null, extra: 1 }],
  };
  const v = validateTableMessage({ type: 'filter', filter, __proto__: { evil: true } });
  assert.ok(v.ok);
  assert.deepEqual(v.message, {
    type: 'filter',
    filter: { ...filter, ranges: [{ key: 'best_val_acc', min: 0.5, max: null }] },
  });
  assert.notEqual(v.ok && v.message.type === 'filter' && v.message.filter.tags, filter.tags);
  assert.deepEqual(validateTableMessage({ type: 'select', ids: ['x'] }), {
    ok: true,
    message: { type: 'select', ids: ['x'] },
  });
  assert.deepEqual(validateTableMessage({ type: 'columns', mode: 'auto', keys: 5 }), {
    ok: true,
    message: { type: 'columns', mode: 'auto' },
  });
});

test('bad messages are refused with the field named', () => {
  const bad: [unknown, RegExp][] = [
    [null, /not an object/],
    [{ type: 'launch' }, /unknown message type "launch"/],
    [{ type: 'sort', key: 3 }, /sort: "key"/],
    [{ type: 'sort', key: 'x'.repeat(1000) }, /sort: "key"/],
    [{ type: 'filter', filter: { ...none, text: 'x'.repeat(500) } }, /filter.text/],
    [
      { type: 'filter', filter: { ...none, ranges: [{ key: 'a', min: 'low', max: null }] } },
      /filter.ranges \(a\): min and max/,
    ],
    [{ type: 'filter', filter: { ...none, ranges: [{ key: 'a', min: Infinity, max: null }] } }, /min and max/],
    [{ type: 'filter', filter: { ...none, tags: [1] } }, /filter.tags/],
    [{ type: 'select', ids: 'all' }, /select: "ids"/],
    [{ type: 'columns', mode: 'chosen' }, /columns:/],
    [{ type: 'diff' }, /diff: "onlyDiffering"/],
  ];
  for (const [m, why] of bad) {
    const v = validateTableMessage(m);
    assert.equal(v.ok, false, JSON.stringify(m)?.slice(0, 80));
    assert.match(!v.ok ? v.error : '', why);
  }
});

test('cells are formatted by their column kind, spec values exactly as written', () => {
  assert.equal(formatCell(0.8123, 'percent'), '81.2%');
  assert.equal(formatCell(3725, 'duration'), '1h 02m');
  assert.equal(formatCell(0.0001, 'value'), '0.0001');
  assert.equal(formatCell(0.00012345, 'number'), '1.23e-4');
  assert.equal(formatCell(1234.5, 'rate'), '1235');
  assert.equal(formatCell(null, 'percent'), '—');
  assert.equal(formatCell(undefined, 'value'), '—');
});
