import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  FLAT_MAX_TEXT,
  differingKeys,
  flattenSpec,
  formatFlatValue,
  specDiffRows,
} from '../../../src/core/runs/specDiff';

const base = {
  name: 'flowers',
  data: { train: '/d/train', image_size: 224, batch_size: 32, augment: 'basic' },
  model: { backbone: 'resnet50', freeze: 'backbone', unfreeze: [] },
  train: { epochs: 10, lr: 0.01, plateau: { metric: 'val_loss', patience: 3 } },
  device: { target: 'CPU', ids: [0] },
};

test('flattenSpec gives dotted keys in the spec order and keeps lists whole as JSON text', () => {
  const flat = flattenSpec(base);
  assert.deepEqual(Object.keys(flat).slice(0, 3), ['name', 'data.train', 'data.image_size']);
  assert.equal(flat['train.plateau.patience'], 3);
  assert.equal(flat['device.ids'], '[0]');
  assert.equal(flat['model.unfreeze'], '[]');
  assert.equal(flat['train.plateau'], undefined, 'a section is not a value of its own');
});

test('flattenSpec is bounded: long text is cut, keys beyond the cap dropped, non-objects give nothing', () => {
  const long = flattenSpec({ data: { train: 'x'.repeat(5000) } });
  assert.equal(String(long['data.train']).length, FLAT_MAX_TEXT);
  assert.ok(String(long['data.train']).endsWith('…'));
  const wide = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i]));
  assert.equal(Object.keys(flattenSpec(wide, 10)).length, 10);
  assert.deepEqual(flattenSpec(null), {});
  assert.deepEqual(flattenSpec([1, 2]), {});
  assert.deepEqual(flattenSpec('spec'), {});
});

test('differingKeys names only the fields whose values are not all the same', () => {
  const a = flattenSpec(base);
  const b = flattenSpec({ ...base, train: { ...base.train, lr: 0.001 } });
  const c = flattenSpec({ ...base, model: { ...base.model, freeze: 'none' }, train: { ...base.train, lr: 0.001 } });
  assert.deepEqual(differingKeys([a, b]), ['train.lr']);
  assert.deepEqual(differingKeys([a, b, c]), ['model.freeze', 'train.lr']);
  assert.deepEqual(differingKeys([b, c]), ['model.freeze']);
});

test('differingKeys: a key only some runs have differs; types matter; one or no spec has no differences', () => {
  const a = flattenSpec(base);
  const withEma = flattenSpec({ ...base, train: { ...base.train, ema: 0.999 } });
  assert.deepEqual(differingKeys([a, withEma]), ['train.ema']);
  assert.deepEqual(differingKeys([{ x: 1 }, { x: '1' }]), ['x']);
  assert.deepEqual(differingKeys([{ x: null }, { x: null }]), []);
  assert.deepEqual(differingKeys([{ ids: '[0,1]' }, { ids: '[0,1]' }]), []);
  assert.deepEqual(differingKeys([a]), []);
  assert.deepEqual(differingKeys([]), []);
});

test('specDiffRows puts the runs side by side and marks the rows that differ', () => {
  const a = flattenSpec(base);
  const b = flattenSpec({ ...base, train: { ...base.train, lr: 0.001, ema: 0.99 } });
  const rows = specDiffRows([a, b]);
  const lr = rows.find((r) => r.key === 'train.lr');
  assert.deepEqual(lr, { key: 'train.lr', values: [0.01, 0.001], differs: true });
  assert.deepEqual(
    rows.find((r) => r.key === 'data.image_size'),
    { key: 'data.image_size', values: [224, 224], differs: false },
  );
  assert.deepEqual(
    rows.find((r) => r.key === 'train.ema'),
    { key: 'train.ema', values: [undefined, 0.99], differs: true },
  );
  assert.deepEqual(
    specDiffRows([a, b], true).map((r) => r.key),
    ['train.lr', 'train.ema'],
  );
});

test('formatFlatValue shows a missing key as a dash and null as null', () => {
  assert.equal(formatFlatValue(undefined), '—');
  assert.equal(formatFlatValue(null), 'null');
  assert.equal(formatFlatValue(0.001), '0.001');
  assert.equal(formatFlatValue(false), 'false');
});
