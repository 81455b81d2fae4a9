// Named weight sources (`mindcv:`, `hf-hub:`) in model.pretrained are not paths: the editor leaves
// them as written when it launches from a copy of the spec, does not report them as missing files,
// and does not ask the target's runner to probe them.
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { absolutizeSpecPaths } from '../../../src/core/spec/builder';
import { parseSpecText } from '../../../src/core/spec/file';
import { checkSpec } from '../../../src/core/spec/schema';
import {
  backboneOfNamed,
  cacheRelSource,
  catalogSources,
  isNamedWeights,
  namedCacheRel,
  withPretrained,
} from '../../../src/core/spec/weightSources';
import { parse as parseJsonc } from 'jsonc-parser';
import { wantedPaths } from '../../../src/server/remoteFacts';
import { parseSpecDocument } from '../../../src/server/specDocument';

test('mindcv: and hf-hub: values are named sources; paths are not', () => {
  assert.equal(isNamedWeights('mindcv:resnet50'), true);
  assert.equal(isNamedWeights('hf-hub:timm/resnet50.a1_in1k:model.safetensors'), true);
  assert.equal(isNamedWeights('weights/mindcv:resnet50.ckpt'), false);
  assert.equal(isNamedWeights('resnet50.ckpt'), false);
  assert.equal(isNamedWeights(null), false);
});

test('a named source stays as written when the spec paths are made absolute; a file is joined', () => {
  const named = absolutizeSpecPaths({ model: { pretrained: 'mindcv:resnet18' } }, '/specs', path.posix.join);
  assert.deepEqual(named, { model: { pretrained: 'mindcv:resnet18' } });
  const file = absolutizeSpecPaths({ model: { pretrained: 'w/r.ckpt' } }, '/specs', path.posix.join);
  assert.deepEqual(file, { model: { pretrained: '/specs/w/r.ckpt' } });
});

test('file checks pass a named source and still report a missing file', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'aft-weights-'));
  try {
    mkdirSync(path.join(dir, 'data', 'cat'), { recursive: true });
    const spec = (pretrained: string) => ({
      data: { train: 'data' },
      model: { backbone: 'resnet18', pretrained },
    });
    assert.deepEqual(checkSpec(spec('mindcv:resnet18'), { checkFiles: true, baseDir: dir }), []);
    const missing = checkSpec(spec('nope.ckpt'), { checkFiles: true, baseDir: dir });
    assert.deepEqual(
      missing.map((p) => p.message),
      ['file not found: nope.ckpt'],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the target is not asked to probe a named source', () => {
  const doc = parseSpecDocument(
    JSON.stringify({ data: { train: 'd' }, model: { pretrained: 'hf-hub:timm/resnet18.a1_in1k' } }),
    '/s/run.ascend.json',
  );
  assert.deepEqual(wantedPaths(doc, '/s'), [{ field: 'data.train', path: '/s/d' }]);
});

test('model.pretrained is set in a JSON spec, comments and other fields kept; YAML is left alone', () => {
  const text =
    '{\n  // my run\n  "data": { "train": "d" },\n  "model": { "backbone": "resnet50", "pretrained": null }\n}\n';
  const out = withPretrained(text, `/home/u/.cache/ascend-finetune/weights/local/it's "w".ckpt`);
  assert.ok(out?.includes('// my run'));
  const parsed = parseJsonc(out ?? '') as { model: { backbone: string; pretrained: string } };
  assert.deepEqual(parsed.model, {
    backbone: 'resnet50',
    pretrained: `/home/u/.cache/ascend-finetune/weights/local/it's "w".ckpt`,
  });
  const noModel = withPretrained('{"data": {"train": "d"}}', 'mindcv:resnet50');
  assert.deepEqual(parseJsonc(noModel ?? ''), { data: { train: 'd' }, model: { pretrained: 'mindcv:resnet50' } });
});

test('Set model.pretrained edits a YAML spec too, keeping its comments; a value that needs quotes gets them', () => {
  const yaml = '# my run\ndata:\n  train: d  # the folder\nmodel:\n  backbone: resnet50\n  pretrained: null\n';
  const value = `/w/it's: "w" #1.ckpt`;
  const out = withPretrained(yaml, value) ?? '';
  assert.match(out, /^# my run\n/);
  assert.match(out, /# the folder/);
  assert.deepEqual(parseSpecText(out, 'r.ascend.yaml'), {
    data: { train: 'd' },
    model: { backbone: 'resnet50', pretrained: value },
  });
  const added = withPretrained('data:\n  train: d\n', 'mindcv:resnet50') ?? '';
  assert.deepEqual(parseSpecText(added, 'r.ascend.yml'), {
    data: { train: 'd' },
    model: { pretrained: 'mindcv:resnet50' },
  });
  const empty = withPretrained('data:\n  train: d\nmodel:\n', 'mindcv:resnet50') ?? '';
  assert.deepEqual(parseSpecText(empty, 'r.ascend.yml'), {
    data: { train: 'd' },
    model: { pretrained: 'mindcv:resnet50' },
  });
  assert.equal(withPretrained('- a\n- b\n', 'mindcv:resnet50'), undefined, 'a list is not a spec');
  assert.equal(withPretrained('model: 3\n', 'mindcv:resnet50'), undefined);
  assert.equal(withPretrained('data: [unclosed\n', 'mindcv:resnet50'), undefined);
});

test("the wizard's catalog rows: every ResNet the runner builds, mindcv backbones and timm's repositories, each naming the backbone it loads into", () => {
  const sources = catalogSources();
  const backbones = new Set(sources.map((s) => s.backbone));
  for (const b of ['resnet101', 'resnet18', 'resnet34', 'resnet50', 'mobilenet_v3_small_100', 'convnext_tiny']) {
    assert.ok(backbones.has(b), `a catalog row for ${b}`);
  }
  // Every row loads into a backbone the spec accepts (the one schema's model.backbone enum).
  const schema = JSON.parse(
    readFileSync(path.join(__dirname, '../../../runner/ascend_finetune/spec.schema.json'), 'utf8'),
  );
  const accepted = new Set<string>(schema.properties.model.properties.backbone.enum);
  for (const b of backbones) assert.ok(accepted.has(b!), `${b} is a model.backbone`);
  for (const s of sources) assert.equal(backboneOfNamed(s.value), s.backbone);
  assert.equal(backboneOfNamed('mindcv:resnet50'), 'resnet50');
  // A timm repository by its architecture, listed or not (the runner maps the same: catalog.py).
  assert.equal(backboneOfNamed('hf-hub:timm/resnet50.a1_in1k'), 'resnet50');
  assert.equal(
    backboneOfNamed('hf-hub:timm/vit_base_patch16_224.some_new_tag#sha256=' + 'a'.repeat(64)),
    'vit_b_16_224',
  );
  assert.equal(backboneOfNamed('hf-hub:timm/resnet50'), 'resnet50');
  assert.equal(
    backboneOfNamed('hf-hub:timm/regnety_040.ra3_in1k'),
    undefined,
    'an architecture the runner does not map',
  );
  // The runner reads the architecture whoever publishes the repository (a mirror's copy of timm's).
  assert.equal(backboneOfNamed('hf-hub:someone/resnet50.a1_in1k'), 'resnet50');
  assert.equal(backboneOfNamed('hf-hub:someone/bert-base'), undefined);
  assert.equal(backboneOfNamed('/data/w.ckpt'), undefined);
});

test('a cache place names its source again: the inverse of namedCacheRel, for every catalog entry', () => {
  const catalog = JSON.parse(
    readFileSync(path.join(__dirname, '../../../runner/ascend_finetune/weights_catalog.json'), 'utf8'),
  ) as { mindcv: Record<string, unknown>; hf_hub: Record<string, unknown> };
  // Every entry, those the runner does not offer as a backbone too (the mapping alone; the copy checks the backbone).
  const all = [
    ...Object.keys(catalog.mindcv).map((n) => `mindcv:${n}`),
    ...Object.keys(catalog.hf_hub).map((r) => `hf-hub:${r}`),
  ];
  assert.equal(all.length, Object.keys(catalog.mindcv).length + Object.keys(catalog.hf_hub).length);
  for (const value of all) {
    const rel = namedCacheRel(value);
    assert.ok(rel, value);
    assert.equal(cacheRelSource(rel), value, rel);
  }
  for (const s of catalogSources()) assert.equal(cacheRelSource(namedCacheRel(s.value)!), s.value);
  assert.equal(cacheRelSource('mindcv/pit_xs-fea0d37e.ckpt'), 'mindcv:pit_xs');
  // A hub file other than model.safetensors keeps its name, folders included.
  for (const value of [
    'hf-hub:timm/resnet50.a1_in1k:pytorch_model.bin',
    'hf-hub:someone/vit_x.tag:sub/dir/w.safetensors',
  ]) {
    assert.equal(cacheRelSource(namedCacheRel(value)!), value);
  }
  assert.equal(
    cacheRelSource('hf-hub/timm/vit_base_patch32_224.augreg_in1k/main/model.safetensors'),
    'hf-hub:timm/vit_base_patch32_224.augreg_in1k',
  );
  // Places no source is fetched to.
  for (const rel of [
    'local/0123456789ab/model.safetensors',
    'mindcv/not-in-the-catalog.ckpt',
    'mindcv/resnet/resnet50-e0733ab8.ckpt',
    'hf-hub/timm/resnet50.a1_in1k/main/config.json',
    'hf-hub/timm/resnet50.a1_in1k/v1/model.safetensors',
    'hf-hub/timm/resnet50.a1_in1k/main/../x.bin',
    'hf-hub/timm/main/model.safetensors',
    'model.safetensors',
  ]) {
    assert.equal(cacheRelSource(rel), undefined, rel);
  }
});
