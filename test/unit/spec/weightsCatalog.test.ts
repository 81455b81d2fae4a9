// runner/ascend_finetune/weights_catalog.json, as completion and the wizard read it: every mindcv entry
// loads into a backbone the spec offers (or says null: listed, refused), and its file name carries the
// hash part mindcv published (hex, recorded as `file_hash`), or none, recorded as null. An entry
// without a model card's top-1 (skresnet18) renders with what is recorded and nothing made up.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { fieldSchema } from '../../../src/core/spec/schema';
import { mindcvSources, weightsFacts } from '../../../src/core/spec/weightSources';
import { english } from '../../../src/shared/l10n';
import { catalogWeightsItems } from '../../../src/core/wizard/weightsItems';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const CATALOG = JSON.parse(readFileSync(path.join(ROOT, 'runner/ascend_finetune/weights_catalog.json'), 'utf8')) as {
  mindcv: Record<string, { path: string; backbone: string | null; file_hash: string | null; top1?: number }>;
};

test("every catalog entry's backbone is one model.backbone offers", () => {
  const offered = fieldSchema(['model', 'backbone'])?.enum as string[];
  assert.ok(offered.length >= 36);
  const entries = Object.entries(CATALOG.mindcv);
  for (const [name, e] of entries) assert.ok(e.backbone === null || offered.includes(e.backbone), name);
  // One entry per offered mindcv model whose default cfg has a URL: 32 families, most with weights.
  const withBackbone = entries.filter(([, e]) => e.backbone !== null);
  assert.ok(withBackbone.length >= 35, String(withBackbone.length));
  assert.equal(new Set(withBackbone.map(([, e]) => e.backbone)).size, withBackbone.length, 'one entry per backbone');
});

test("every file name's hash part is well-formed and recorded", () => {
  for (const [name, e] of Object.entries(CATALOG.mindcv)) {
    assert.match(e.path, /^[a-z0-9_]+(\/[a-z0-9_]+)*\/[A-Za-z0-9_]+-[A-Za-z0-9_]+\.ckpt$/, name);
    const m = /-([0-9a-f]{7,9})\.ckpt$/.exec(e.path);
    assert.equal(e.file_hash, m ? m[1] : null, name);
    if (e.file_hash === null) assert.doesNotMatch(path.basename(e.path), /-[0-9a-f]{6,}\b/, name);
  }
  assert.equal(CATALOG.mindcv.resnet50.file_hash, 'e0733ab8');
  assert.equal(CATALOG.mindcv.densenet121.file_hash, null); // densenet121-120_5004_Ascend.ckpt
});

test('an entry without a top-1 renders with what is recorded', () => {
  const sk = mindcvSources().find((s) => s.value === 'mindcv:skresnet18');
  assert.ok(sk && sk.top1 === undefined && CATALOG.mindcv.skresnet18.top1 === undefined);
  assert.equal(weightsFacts(sk, english, { params: true }), 'mindcv · Apache-2.0 · 12.0 M params · 47.9 MB');
  const [item] = catalogWeightsItems('skresnet18', 'box', english, [sk]);
  assert.doesNotMatch(`${item.description} ${item.detail}`, /top-1|undefined|NaN|\?/);
});
