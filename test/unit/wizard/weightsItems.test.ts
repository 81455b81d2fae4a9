// The pretrained step: each mindcv catalog item shows the source, licence, size and the model card's
// ImageNet top-1 (src/core/wizard/weightsItems.ts), the chosen backbone's first, and once the target's
// `weights-status` answered, whether it is cached there or downloads there (and how much).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { english, translator } from '../../../src/shared/l10n';
import { mindcvSources, type NamedWeights } from '../../../src/core/spec/weightSources';
import { catalogWeightsItems } from '../../../src/core/wizard/weightsItems';
import type { CacheEntry } from '../../../src/core/targets/weightsCache';

const zh = translator(
  JSON.parse(readFileSync(path.resolve(__dirname, '../../../l10n/bundle.l10n.zh-cn.json'), 'utf8')) as Record<
    string,
    string
  >,
);

const entry = (source: string, over: Partial<CacheEntry>): [string, CacheEntry] => [
  source,
  { source, path: `/c/${source}`, state: 'missing', bytes: null, partBytes: 0, ...over },
];

test('every catalog backbone is offered, the chosen one first, with source, licence, size and top-1', () => {
  const items = catalogWeightsItems('resnet50', 'box', english);
  assert.equal(items.length, mindcvSources().length);
  assert.equal(items[0].value, 'mindcv:resnet50');
  assert.equal(items[0].label, '$(cloud-download) mindcv:resnet50');
  assert.equal(items[0].description, 'ImageNet weights (mindcv), fetched on box and cached; backbone resnet50');
  assert.equal(items[0].cached, undefined, 'not known before the listing');
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
  // Its cache note on the target says nothing about a size it does not know (no "(?)").
  const on = (over: Partial<CacheEntry>, t = english) =>
    catalogWeightsItems('x', 'box', t, [bare], new Map([entry('mindcv:x', over)]))[0].description;
  assert.equal(on({}), 'downloads on box; backbone x');
  assert.equal(on({ partBytes: 3_000_000 }), 'downloads on box (3.0 MB already there); backbone x');
  assert.equal(on({ state: 'damaged', bytes: 10 }), 'downloads again on box: the cached file is damaged; backbone x');
  assert.equal(
    on({ state: 'unreadable', why: 'permission denied' }),
    'downloads on box: the file in its cache is not used (permission denied); backbone x',
  );
  assert.equal(on({ state: 'cached', bytes: 5_000_000 }), 'cached on box (5.0 MB); backbone x');
  assert.equal(on({}, zh), '将在 box 上下载；骨干网络 x');
});

test('zh-cn: the item in Simplified Chinese', () => {
  const item = catalogWeightsItems('resnet18', 'box', zh)[0];
  assert.equal(item.value, 'mindcv:resnet18');
  assert.equal(item.description, 'ImageNet 权重（mindcv），在 box 上获取并缓存；骨干网络 resnet18');
  assert.equal(item.detail, 'mindcv · Apache-2.0 · 46.8 MB · ImageNet top-1 准确率 70.21%');
});

const listing = new Map([
  entry('mindcv:resnet18', { state: 'cached', bytes: 46_855_213 }),
  entry('mindcv:resnet50', {}),
  entry('mindcv:resnet34', { partBytes: 12_000_000 }),
  entry('mindcv:resnet101', { state: 'damaged', bytes: 1000, why: 'truncated' }),
  entry('mindcv:vit_b_32_224', { state: 'unsafe', why: 'a symbolic link, not followed' }),
]);
const byValue = (t = english) =>
  new Map(catalogWeightsItems('resnet50', 'box', t, undefined, listing).map((i) => [i.value, i]));

test('with the target listing: cached with its size, or downloads there with the catalog size', () => {
  const items = byValue();
  assert.equal(items.get('mindcv:resnet18')?.description, 'cached on box (46.9 MB); backbone resnet18');
  assert.equal(items.get('mindcv:resnet18')?.cached, true);
  assert.equal(items.get('mindcv:resnet50')?.description, 'downloads on box (102 MB); backbone resnet50');
  assert.equal(items.get('mindcv:resnet50')?.cached, false);
  assert.equal(
    items.get('mindcv:resnet34')?.description,
    'downloads on box (87.3 MB, 12.0 MB already there); backbone resnet34',
  );
  assert.equal(
    items.get('mindcv:resnet101')?.description,
    'downloads again on box (179 MB): the cached file is damaged; backbone resnet101',
  );
  assert.equal(
    items.get('mindcv:vit_b_32_224')?.description,
    'downloads on box (353 MB): the file in its cache is not used (a symbolic link, not followed); backbone vit_b_32_224',
  );
  assert.equal(items.get('mindcv:resnet101')?.cached, false);
  assert.equal(items.get('mindcv:vit_b_32_224')?.cached, false);
  // A source the listing did not mention stays "not known".
  assert.equal(items.get('mindcv:convnext_tiny')?.cached, undefined);
  assert.equal(items.get('mindcv:resnet18')?.detail, 'mindcv · Apache-2.0 · 46.8 MB · ImageNet top-1 70.21%');
});

test('zh-cn: cached and downloads in Simplified Chinese', () => {
  const items = byValue(zh);
  assert.equal(items.get('mindcv:resnet18')?.description, '已缓存在 box（46.9 MB）；骨干网络 resnet18');
  assert.equal(items.get('mindcv:resnet50')?.description, '将在 box 上下载（102 MB）；骨干网络 resnet50');
  assert.equal(
    items.get('mindcv:resnet34')?.description,
    '将在 box 上下载（87.3 MB，已有 12.0 MB）；骨干网络 resnet34',
  );
  assert.equal(
    items.get('mindcv:resnet101')?.description,
    '将在 box 上重新下载（179 MB）：缓存的文件已损坏；骨干网络 resnet101',
  );
});
