import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { complete, specSnippets } from '../../../src/server/completion';
import { parseSpecDocument } from '../../../src/server/specDocument';

function at(text: string, fileName = 'x.ascend.yaml') {
  const offset = text.indexOf('|');
  const clean = text.replace('|', '');
  const td = TextDocument.create(`file:///w/${fileName}`, 'ascend-run', 1, clean);
  return complete(parseSpecDocument(clean, fileName), td, offset, '/w');
}

const snippetNames = () => Object.keys(specSnippets());

test('whole-spec snippets: offered once each, in an empty YAML spec at the top level only', () => {
  assert.equal(snippetNames().length, 3);
  const empty = at('|').filter((i) => i.kind === 15 /* Snippet */);
  assert.deepEqual(
    empty.map((i) => i.label),
    snippetNames(),
  );
  // a value: enum values only, no snippet
  const value = at('amp:\n  level: |\n');
  assert.ok(value.length > 0);
  assert.ok(
    value.every((i) => !snippetNames().includes(String(i.label))),
    JSON.stringify(value.map((i) => i.label)),
  );
  // a spec that has fields already: keys, no whole-spec snippet
  const keys = at('name: x\n|');
  assert.ok(keys.some((i) => i.label === 'data'));
  assert.ok(keys.every((i) => !snippetNames().includes(String(i.label))));
  // JSON specs: the snippets are YAML
  assert.ok(at('{|}', 'x.ascend.json').every((i) => !snippetNames().includes(String(i.label))));
});

test('model.pretrained completes the mindcv weights of the spec backbone from the runner catalog', () => {
  const labels = (text: string) =>
    at(text)
      .map((i) => String(i.label))
      .filter((l) => l.startsWith('mindcv:'));
  assert.deepEqual(labels('model:\n  backbone: resnet18\n  pretrained: |\n'), ['mindcv:resnet18']);
  assert.deepEqual(labels('model:\n  pretrained: |\n'), ['mindcv:resnet50'], 'the default backbone');
  const json = at('{"model": {"backbone": "resnet101", "pretrained": |}}', 'x.ascend.json');
  const item = json.find((i) => i.label === 'mindcv:resnet101');
  assert.equal(item?.textEdit && 'newText' in item.textEdit ? item.textEdit.newText : undefined, '"mindcv:resnet101"');
  assert.deepEqual(labels('amp:\n  level: |\n'), [], 'only for model.pretrained');
  // timm's repositories of the backbone's architecture follow mindcv's file.
  const hub = at('model:\n  backbone: efficientnet_b0\n  pretrained: |\n')
    .map((i) => String(i.label))
    .filter((l) => l.startsWith('hf-hub:'));
  assert.deepEqual(hub, ['hf-hub:timm/efficientnet_b0.ra4_e3600_r224_in1k', 'hf-hub:timm/efficientnet_b0.ra_in1k']);
});

test('model.preprocess completes its presets, and inside its object form the fields, each documented as optional', () => {
  const presets = at('model:\n  preprocess: |\n').map((i) => i.label);
  assert.deepEqual(presets, ['auto', 'imagenet', 'mindcv', 'torchvision', 'timm']);
  const fields = at('model:\n  preprocess:\n    preset: timm\n    |\n');
  assert.deepEqual(
    fields.map((i) => i.label),
    ['mean', 'std', 'crop_pct', 'crop_mode', 'interpolation'],
  );
  const mean = fields.find((i) => i.label === 'mean')!;
  assert.match(JSON.stringify(mean.documentation), /optional · 3 numbers from 0 to 1/);
  assert.deepEqual(
    at('model:\n  preprocess:\n    interpolation: |\n').map((i) => i.label),
    ['bilinear', 'bicubic'],
  );
});
