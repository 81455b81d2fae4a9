// The short path's pretrained step: each mindcv catalog item shows the source, licence, size and the
// model card's ImageNet top-1 (src/core/wizard/weightsItems.ts), the chosen backbone's first.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { english, translator } from '../../../src/shared/l10n';
import { mindcvSources, type NamedWeights } from '../../../src/core/spec/weightSources';
import { catalogWeightsItems } from '../../../src/core/wizard/weightsItems';

const zh = translator(
  JSON.parse(readFileSync(path.resolve(__dirname, '../../../l10n/bundle.l10n.zh-cn.json'), 'utf8')) as Record<
    string,
    string
  >,
);

test('every catalog backbone is offered, the chosen one first, with source, licence, size and top-1', () => {
  const items = catalogWeightsItems('resnet50', 'box', english);
  assert.equal(items.length, mindcvSources().length);
  assert.equal(items[0].value, 'mindcv:resnet50');
  assert.equal(items[0].label, '$(cloud-download) mindcv:resnet50');
  assert.equal(items[0].description, 'ImageNet weights (mindcv), fetched on box and cached; backbone resnet50');
  assert.equal(items[0].detail, 'mindcv · Apache-2.0 · 102 MB · ImageNet top-1 76.69%');
  const small = items.find((i) => i.value === 'mindcv:mobilenet_v3_small_100');
  assert.equal(small?.detail, 'mindcv · Apache-2.0 · 10.2 MB · ImageNet top-1 68.10%');
  // The others keep the catalog's order behind the chosen backbone's.
  const rest = items.slice(1).map((i) => i.value);
  const catalogOrder = mindcvSources()
    .map((s) => s.value)
    .filter((v) => v !== 'mindcv:resnet50');
  assert.deepEqual(rest, catalogOrder);
});

test('an entry without a recorded top-1 or size shows only what is recorded', () => {
  const bare: NamedWeights = { value: 'mindcv:x', backbone: 'x', file: 'x/x.ckpt', license: 'Apache-2.0' };
  const [item] = catalogWeightsItems('resnet50', 'box', english, [bare]);
  assert.equal(item.detail, 'mindcv · Apache-2.0');
});

test('zh-cn: the item in Simplified Chinese', () => {
  const item = catalogWeightsItems('resnet18', 'box', zh)[0];
  assert.equal(item.value, 'mindcv:resnet18');
  assert.equal(item.description, 'ImageNet 权重（mindcv），在 box 上获取并缓存；骨干网络 resnet18');
  assert.equal(item.detail, 'mindcv · Apache-2.0 · 46.8 MB · ImageNet top-1 准确率 70.21%');
});
