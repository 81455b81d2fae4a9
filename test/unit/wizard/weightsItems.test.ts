// The pretrained step: the chosen backbone's catalog items (mindcv's files, then timm's hub
// repositories), each with the source, licence, size and the model card's (timm: results table's) ImageNet top-1 (src/core/wizard/weightsItems.ts), a row to the whole catalog
// grouped by family (which says when the backbone has none of its own), and once the target's
// `weights-status` answered, whether each is cached there or downloads there (and how much).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { english, translator } from '../../../src/shared/l10n';
import { catalogSources, hubSources, type NamedWeights } from '../../../src/core/spec/weightSources';
import { catalogByFamily, catalogWeightsItems, otherBackboneRow } from '../../../src/core/wizard/weightsItems';
import { BACKBONES } from '../../../src/core/spec/builder';
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

test("the step offers the chosen backbone's weights only, with source, licence, size and top-1", () => {
  const items = catalogWeightsItems('resnet50', 'box', english);
  // mindcv's file first, then timm's repositories of the architecture: licences that allow commercial
  // use first, each group best top-1 first.
  assert.equal(items[0].value, 'mindcv:resnet50');
  const timm = items.slice(1);
  assert.equal(timm.length, 18);
  assert.ok(timm.every((i) => i.value.startsWith('hf-hub:timm/resnet50.')));
  const facts = timm.map((i) => hubSources().find((s) => s.value === i.value)!);
  const nc = facts.map((f) => f.license === 'CC-BY-NC-4.0');
  assert.deepEqual(
    nc,
    [...nc].sort((a, b) => Number(a) - Number(b)),
    'non-commercial last',
  );
  assert.equal(nc.filter(Boolean).length, 2);
  for (const group of [false, true]) {
    const top1 = facts.filter((_, i) => nc[i] === group).map((f) => f.top1 ?? 0);
    assert.deepEqual(
      top1,
      [...top1].sort((a, b) => b - a),
    );
  }
  const a1 = timm.find((i) => i.value === 'hf-hub:timm/resnet50.a1_in1k');
  assert.equal(a1?.detail, 'timm (Hugging Face hub) · Apache-2.0 · 102 MB · ImageNet top-1 80.382%');
  assert.equal(a1?.description, 'timm weights from the Hugging Face hub, fetched on box and cached; backbone resnet50');
  // A licence that forbids commercial use and a size other than 224 px are shown.
  const ssl = timm.find((i) => i.value === 'hf-hub:timm/resnet50.fb_ssl_yfcc100m_ft_in1k');
  assert.match(ssl?.detail ?? '', /· CC-BY-NC-4\.0 ·/);
  assert.match(
    timm.find((i) => i.value === 'hf-hub:timm/resnet50.a3_in1k')?.detail ?? '',
    / · 160 px · ImageNet top-1 75\.994%$/,
  );
  assert.equal(items[0].label, '$(cloud-download) mindcv:resnet50');
  assert.equal(items[0].description, 'ImageNet weights (mindcv), fetched on box and cached; backbone resnet50');
  assert.equal(items[0].cached, undefined, 'not known before the listing');
  assert.equal(items[0].detail, 'mindcv · Apache-2.0 · 102 MB · ImageNet top-1 76.69%');
  const small = catalogWeightsItems('mobilenet_v3_small_100', 'box', english);
  assert.deepEqual(
    small.map((i) => [i.value, i.detail]),
    [
      ['mindcv:mobilenet_v3_small_100', 'mindcv · Apache-2.0 · 10.2 MB · ImageNet top-1 68.10%'],
      [
        'hf-hub:timm/mobilenetv3_small_100.lamb_in1k',
        'timm (Hugging Face hub) · Apache-2.0 · 10.2 MB · ImageNet top-1 67.636%',
      ],
    ],
  );
  // Over every backbone, each catalog source is offered exactly once: under the backbone it loads into.
  const offered = BACKBONES.flatMap((b) => catalogWeightsItems(b, 'box', english).map((i) => i.value));
  assert.deepEqual(
    offered.sort(),
    catalogSources()
      .map((s) => s.value)
      .sort(),
  );
  assert.equal(otherBackboneRow('resnet50', english).label, '$(list-tree) Weights of another backbone…');
  assert.equal(
    otherBackboneRow('resnet50', english).description,
    'the whole catalog by family; picking one changes the backbone to match',
  );
});

test('a backbone without catalog weights says so on the row to the whole catalog', () => {
  // mindcv publishes no ViT-B/16 file; timm's repositories give it weights. ResNeSt-14 has none at all.
  assert.ok(catalogWeightsItems('vit_b_16_224', 'box', english).every((i) => i.value.startsWith('hf-hub:timm/')));
  assert.deepEqual(catalogWeightsItems('resnest14', 'box', english), []);
  assert.equal(
    otherBackboneRow('resnest14', english).description,
    "no catalog weights for resnest14: pick another backbone's, and the backbone changes to match",
  );
  assert.equal(
    otherBackboneRow('resnest14', zh).description,
    '目录中没有 resnest14 的权重：选择其他骨干网络的权重，骨干网络会随之更改',
  );
  assert.equal(otherBackboneRow('resnest14', zh).label, '$(list-tree) 其他骨干网络的权重…');
  // Every backbone of the schema: the row says "no catalog weights" exactly when the step has none.
  for (const b of BACKBONES) {
    const none = catalogWeightsItems(b, 'box', english).length === 0;
    assert.equal(otherBackboneRow(b, english).description.startsWith('no catalog weights'), none, b);
  }
});

test('the whole catalog: every source once, under its family, families in alphabetical order', () => {
  const rows = catalogByFamily('box', english);
  const headings = rows.flatMap((r) => ('family' in r ? [r.family] : []));
  const families = [...new Set(catalogSources().map((s) => s.family))];
  assert.deepEqual(headings, [...families].sort() as string[]);
  assert.ok(headings.length > 20, `${headings.length} families`);
  const values = rows.flatMap((r) => ('value' in r ? [r.value] : []));
  assert.deepEqual(
    values.slice().sort(),
    catalogSources()
      .map((s) => s.value)
      .sort(),
  );
  // Under each heading its own sources in the catalog's order (the smallest first).
  const under = (family: string) => {
    const at = rows.findIndex((r) => 'family' in r && r.family === family);
    const next = rows.findIndex((r, i) => i > at && 'family' in r);
    return rows.slice(at + 1, next < 0 ? undefined : next).map((r) => ('value' in r ? r.value : r.family));
  };
  // mindcv's files first, then timm's repositories.
  const hub = (family: string) =>
    hubSources()
      .filter((s) => s.family === family)
      .map((s) => s.value);
  assert.deepEqual(under('resnet'), [
    'mindcv:resnet18',
    'mindcv:resnet34',
    'mindcv:resnet50',
    'mindcv:resnet101',
    ...hub('resnet'),
  ]);
  assert.deepEqual(under('mobilenetv3'), [
    'mindcv:mobilenet_v3_small_100',
    'mindcv:mobilenet_v3_large_100',
    ...hub('mobilenetv3'),
  ]);
  // An entry without a family stands under its backbone's name.
  const bare: NamedWeights = { value: 'mindcv:x', source: 'mindcv', backbone: 'x', file: 'x/x.ckpt' };
  assert.deepEqual(
    catalogByFamily('box', english, [bare]).map((r) => ('family' in r ? r.family : r.value)),
    ['x', 'mindcv:x'],
  );
});

test('an entry without a recorded top-1 or size shows only what is recorded', () => {
  const bare: NamedWeights = {
    value: 'mindcv:x',
    source: 'mindcv',
    backbone: 'x',
    file: 'x/x.ckpt',
    license: 'Apache-2.0',
  };
  const [item] = catalogWeightsItems('x', 'box', english, [bare]);
  assert.equal(item.detail, 'mindcv · Apache-2.0');
  // Its cache note on the target says nothing about a size it does not know (no "(?)").
  const on = (over: Partial<CacheEntry>, t = english) =>
    catalogWeightsItems('x', 'box', t, [bare], new Map([entry('mindcv:x', over)]))[0].description;
  assert.equal(on({}), 'downloads on box; backbone x');
  assert.equal(on({ partBytes: 3_000_000 }), 'downloads on box (3.0 MB already there); backbone x');
  // The runner refuses a damaged file (cache_size_mismatch), so the row says how to get a fresh one.
  assert.equal(
    on({ state: 'damaged', bytes: 10 }),
    'damaged in the cache on box: delete /c/mindcv:x there to download it again; backbone x',
  );
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
  new Map(catalogByFamily('box', t, undefined, listing).flatMap((i) => ('value' in i ? [[i.value, i] as const] : [])));

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
    'damaged in the cache on box: delete /c/mindcv:resnet101 there to download it again; backbone resnet101',
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
    'box 上的缓存文件已损坏：在那里删除 /c/mindcv:resnet101 即可重新下载；骨干网络 resnet101',
  );
});
