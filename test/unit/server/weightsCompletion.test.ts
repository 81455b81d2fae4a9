// model.pretrained completion shows each mindcv catalog entry's facts (runner/ascend_finetune/
// weights_catalog.json): source file, licence, parameters, size and ImageNet top-1, in English and zh-cn;
// and whether THIS machine's weights cache holds the file (a real cache folder in ASCEND_FINETUNE_CACHE).
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

function item(textWithMarker: string, label: string) {
  const offset = textWithMarker.indexOf('|');
  const text = textWithMarker.replace('|', '');
  const td = TextDocument.create('file:///w/x.ascend.yaml', 'ascend-run', 1, text);
  const found = complete(parseSpecDocument(text, 'x.ascend.yaml'), td, offset, '/w').find((i) => i.label === label);
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

test("whether this machine's cache holds the file, said to be this machine's only", () => {
  const r18 = item('model:\n  backbone: resnet18\n  pretrained: |\n', 'mindcv:resnet18');
  assert.equal(r18.cache, 'not cached on this machine');
  assert.match(
    r18.doc,
    /^Not in this machine's weights cache: the run downloads it where it executes\. Only this machine's cache/,
  );
  const file = path.join(cache, 'weights', 'mindcv', 'resnet18-1e65cd21.ckpt');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, Buffer.alloc(2_500_000));
  const now = item('model:\n  backbone: resnet18\n  pretrained: |\n', 'mindcv:resnet18');
  assert.equal(now.cache, 'cached on this machine');
  assert.ok(now.doc.startsWith(`In this machine's weights cache: \`${file}\` (2.5 MB).`), now.doc);
  assert.match(now.doc, /the Start wizard shows the target's/);
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
