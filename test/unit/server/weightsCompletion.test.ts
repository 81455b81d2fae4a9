// model.pretrained completion shows each mindcv catalog entry's facts (runner/ascend_finetune/
// weights_catalog.json): source file, licence, parameters, size and ImageNet top-1, in English and zh-cn.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { MarkupContent } from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { complete } from '../../../src/server/completion';
import { setLocale } from '../../../src/server/l10n';
import { parseSpecDocument } from '../../../src/server/specDocument';

after(() => setLocale('en'));

function item(textWithMarker: string, label: string) {
  const offset = textWithMarker.indexOf('|');
  const text = textWithMarker.replace('|', '');
  const td = TextDocument.create('file:///w/x.ascend.yaml', 'ascend-run', 1, text);
  const found = complete(parseSpecDocument(text, 'x.ascend.yaml'), td, offset, '/w').find((i) => i.label === label);
  assert.ok(found, `${label} offered`);
  return { detail: found.detail, doc: (found.documentation as MarkupContent).value };
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
