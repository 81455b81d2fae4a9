// model.pretrained completion shows each catalog entry's facts (mindcv's files, timm's hub repositories) (runner/ascend_finetune/
// weights_catalog.json): source file, licence, parameters, size and ImageNet top-1, in English and zh-cn;
// and whether the spec's target holds the file: this machine's weights cache (a real cache folder in
// ASCEND_FINETUNE_CACHE) for a spec run here, the target's own `weights-status` answer for an SSH target,
// and "not known" (never "cached") when that target is unknown, unreachable or has not answered.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import type { MarkupContent } from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { complete } from '../../../src/server/completion';
import { setLocale } from '../../../src/server/l10n';
import { parseSpecDocument } from '../../../src/server/specDocument';
import type { WeightsView } from '../../../src/server/targetWeights';
import type { TargetWeightsEntry } from '../../../src/shared/specProtocol';

// A cache of this test's own, so the machine's real cache does not decide what is "cached".
const cache = mkdtempSync(path.join(tmpdir(), 'aft-complete-cache-'));
const savedCache = process.env.ASCEND_FINETUNE_CACHE;
process.env.ASCEND_FINETUNE_CACHE = cache;
after(() => {
  setLocale('en');
  if (savedCache === undefined) delete process.env.ASCEND_FINETUNE_CACHE;
  else process.env.ASCEND_FINETUNE_CACHE = savedCache;
  rmSync(cache, { recursive: true, force: true });
});

function item(textWithMarker: string, label: string, weights?: WeightsView) {
  const offset = textWithMarker.indexOf('|');
  const text = textWithMarker.replace('|', '');
  const td = TextDocument.create('file:///w/x.ascend.yaml', 'ascend-run', 1, text);
  const found = complete(parseSpecDocument(text, 'x.ascend.yaml'), td, offset, '/w', weights).find(
    (i) => i.label === label,
  );
  assert.ok(found, `${label} offered`);
  return {
    detail: found.detail,
    doc: (found.documentation as MarkupContent).value,
    cache: found.labelDetails?.description,
  };
}

test('a mindcv weights item: source file, licence, parameters, float32 size and top-1 from the catalog', () => {
  const r18 = item('model:\n  backbone: resnet18\n  pretrained: |\n', 'mindcv:resnet18');
  assert.equal(r18.detail, 'mindcv · Apache-2.0 · 11.7 M params · 46.8 MB · ImageNet top-1 70.21%');
  assert.match(r18.doc, /`resnet\/resnet18-1e65cd21\.ckpt`/);
  assert.match(r18.doc, /Licence: Apache-2\.0 \(mindcv 0\.3\.0\)/);
  assert.match(r18.doc, /Size: 11,689,512 parameters, 46\.8 MB of float32 tensors/);
  assert.match(
    r18.doc,
    /ImageNet-1K top-1: 70\.21% \(mindcv model card: mindcv v0\.3\.0 configs\/resnet\/README\.md\)/,
  );
  const vit = item('model:\n  backbone: vit_b_32_224\n  pretrained: |\n', 'mindcv:vit_b_32_224');
  assert.equal(vit.detail, 'mindcv · Apache-2.0 · 88.2 M params · 353 MB · ImageNet top-1 75.86%');
  assert.match(vit.doc, /Copy Weights to Target/);
});

test('an entry the model card gives no top-1 for (skresnet18): no top-1, nothing made up', () => {
  const sk = item('model:\n  backbone: skresnet18\n  pretrained: |\n', 'mindcv:skresnet18');
  assert.equal(sk.detail, 'mindcv · Apache-2.0 · 12.0 M params · 47.9 MB');
  assert.match(sk.doc, /`sknet\/sknet18-868228e5\.ckpt`/);
  assert.doesNotMatch(sk.doc, /top-1|undefined|NaN/);
});

test("a timm hub item: timm's repository, licence, size, head and top-1 from its results table", () => {
  const a1 = item('model:\n  backbone: resnet50\n  pretrained: |\n', 'hf-hub:timm/resnet50.a1_in1k');
  assert.equal(a1.detail, 'timm (Hugging Face hub) · Apache-2.0 · 25.6 M params · 102 MB · ImageNet top-1 80.382%');
  assert.match(a1.doc, /timm's resnet50 weights on the Hugging Face hub \(`timm\/resnet50\.a1_in1k`\)/);
  assert.match(a1.doc, /Licence: Apache-2\.0 \(timm's pretrained config\)/);
  assert.match(
    a1.doc,
    /ImageNet-1K top-1: 80\.382% \(timm: timm results\/results-imagenet\.csv \(git 4e5207c7\), 224 px\)/,
  );
  assert.equal(a1.cache, 'not cached on this machine');
  // A tag published without a classifier: said, and no top-1 made up.
  const dino = item('model:\n  backbone: vit_b_16_224\n  pretrained: |\n', 'hf-hub:timm/vit_base_patch16_224.dino');
  assert.equal(
    dino.detail,
    'timm (Hugging Face hub) · Apache-2.0 · 85.8 M params · 343 MB · published without a classifier',
  );
  assert.match(dino.doc, /No ImageNet-1K top-1: published without an ImageNet-1K classifier\./);
  assert.doesNotMatch(dino.doc, /undefined|NaN/);
  // Downloaded into this machine's cache where the runner puts hub files: cached.
  const file = path.join(cache, 'weights', 'hf-hub', 'timm', 'resnet50.a1_in1k', 'main', 'model.safetensors');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, Buffer.alloc(1_000_000));
  assert.equal(
    item('model:\n  backbone: resnet50\n  pretrained: |\n', 'hf-hub:timm/resnet50.a1_in1k').cache,
    'cached on this machine',
  );
  rmSync(path.join(cache, 'weights', 'hf-hub'), { recursive: true });
});

test('zh-cn: the facts in Simplified Chinese', () => {
  setLocale('zh-cn');
  try {
    const r = item('model:\n  backbone: mobilenet_v3_small_100\n  pretrained: |\n', 'mindcv:mobilenet_v3_small_100');
    assert.equal(r.detail, 'mindcv · Apache-2.0 · 2.5 M 参数 · 10.2 MB · ImageNet top-1 准确率 68.10%');
    assert.match(r.doc, /许可证：Apache-2\.0/);
    assert.match(r.doc, /大小：2,542,856 个参数/);
    assert.match(
      r.doc,
      /ImageNet-1K top-1 准确率：68\.10%（mindcv 模型卡：mindcv v0\.3\.0 configs\/mobilenetv3\/README\.md）/,
    );
  } finally {
    setLocale('en');
  }
});

test("a spec run on this machine: whether this machine's cache holds the file", () => {
  const r18 = item('model:\n  backbone: resnet18\n  pretrained: |\n', 'mindcv:resnet18');
  assert.equal(r18.cache, 'not cached on this machine');
  assert.match(r18.doc, /^Not in this machine's weights cache: the run downloads it where it executes\./);
  const file = path.join(cache, 'weights', 'mindcv', 'resnet18-1e65cd21.ckpt');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, Buffer.alloc(2_500_000));
  const now = item('model:\n  backbone: resnet18\n  pretrained: |\n', 'mindcv:resnet18');
  assert.equal(now.cache, 'cached on this machine');
  assert.ok(now.doc.startsWith(`In this machine's weights cache: \`${file}\` (2.5 MB).`), now.doc);
  setLocale('zh-cn');
  try {
    assert.equal(item('model:\n  backbone: resnet18\n  pretrained: |\n', 'mindcv:resnet18').cache, '已缓存在本机');
    const r34 = item('model:\n  backbone: resnet34\n  pretrained: |\n', 'mindcv:resnet34');
    assert.equal(r34.cache, '本机未缓存');
    assert.match(r34.doc, /^不在本机的权重缓存中/);
  } finally {
    setLocale('en');
  }
});

const SSH = { id: 'ssh:npu-box', label: 'npu-box', kind: 'ssh' } as const;
const R18 = 'model:\n  backbone: resnet18\n  pretrained: |\n';

function entry(source: string, over: Partial<TargetWeightsEntry>): TargetWeightsEntry {
  return {
    source,
    path: `/home/u/.cache/ascend-finetune/weights/${source}`,
    state: 'missing',
    bytes: null,
    partBytes: 0,
    ...over,
  };
}

test("a spec for an SSH target: the target's own cache, whatever this machine's holds", () => {
  // This machine has resnet18 (the test above put it in its cache): the target's answer decides.
  const listing = new Map([
    ['mindcv:resnet18', entry('mindcv:resnet18', { state: 'missing', partBytes: 1_000_000 })],
    ['mindcv:resnet34', entry('mindcv:resnet34', { state: 'cached', bytes: 87_300_000, path: '/c/resnet34.ckpt' })],
  ]);
  const weights: WeightsView = { target: SSH, entries: listing };
  const r18 = item(R18, 'mindcv:resnet18', weights);
  assert.equal(r18.cache, 'downloads on npu-box (46.8 MB, 1.0 MB already there)');
  assert.match(r18.doc, /^On npu-box, where this spec runs: downloads on npu-box/);
  const r34 = item('model:\n  backbone: resnet34\n  pretrained: |\n', 'mindcv:resnet34', weights);
  assert.equal(r34.cache, 'cached on npu-box (87.3 MB)');
  assert.ok(
    r34.doc.startsWith('On npu-box, where this spec runs: cached on npu-box (87.3 MB) (`/c/resnet34.ckpt`).'),
    r34.doc,
  );
  assert.doesNotMatch(r34.doc, /this machine's weights cache/);
});

test('a target that is unknown, unreachable or not heard from yet: "not known", never "cached"', () => {
  const cases: [WeightsView, RegExp][] = [
    [
      { target: { id: 'gone', label: 'gone', kind: 'unknown' }, unknown: { why: 'unconfigured' } },
      /"gone" is not a configured target/,
    ],
    [
      { target: SSH, unknown: { why: 'failed', message: 'ssh: connect to host npu-box port 22: No route to host' } },
      /npu-box did not answer \(ssh: connect to host npu-box port 22: No route to host\)/,
    ],
    [{ target: SSH, unknown: { why: 'pending' } }, /npu-box has not answered yet; complete again in a moment/],
    [{ target: SSH, entries: new Map() }, /npu-box did not list it/],
  ];
  for (const [weights, why] of cases) {
    const r = item(R18, 'mindcv:resnet18', weights);
    assert.equal(r.cache, `not known on ${weights.target.label}`);
    assert.match(r.doc, /^Whether \S+ \(the target this spec runs on\) has it in its weights cache is not known: /);
    assert.match(r.doc, why);
    assert.doesNotMatch(`${r.cache} ${r.doc}`, /cached on/);
  }
  setLocale('zh-cn');
  try {
    const zh = item(R18, 'mindcv:resnet18', { target: SSH, unknown: { why: 'pending' } });
    assert.equal(zh.cache, '在 npu-box 上未知');
  } finally {
    setLocale('en');
  }
});
