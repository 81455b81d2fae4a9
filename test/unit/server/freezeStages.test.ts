// model.freeze and model.unfreeze's steps per backbone in the spec language server: completion offers
// only the spec backbone's stages, hover lists them, and a stage the backbone lacks is an error
// naming the backbone and its stages, with a quick fix per stage; in English and in zh-cn.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { Diagnostic, MarkupContent } from 'vscode-languageserver';
import { hover, quickFixes } from '../../../src/server/actions';
import { complete } from '../../../src/server/completion';
import { diagnose } from '../../../src/server/diagnostics';
import { setLocale } from '../../../src/server/l10n';
import { parseSpecDocument } from '../../../src/server/specDocument';

after(() => setLocale('en'));

function open(textWithMarker: string, fileName = 'x.ascend.yaml') {
  const offset = textWithMarker.indexOf('|');
  const text = textWithMarker.replace('|', '');
  const td = TextDocument.create(`file:///w/${fileName}`, 'ascend-run', 1, text);
  return { doc: parseSpecDocument(text, fileName), td, offset, text };
}

const freezeValues = (textWithMarker: string, fileName?: string) => {
  const { doc, td, offset } = open(textWithMarker, fileName);
  return complete(doc, td, offset, '/w').map((i) => String(i.label));
};

const message = (d: Diagnostic) => (typeof d.message === 'string' ? d.message : d.message.value);

function stageErrors(text: string, fileName?: string) {
  const { doc, td } = open(text, fileName);
  const ds = diagnose(doc, td).filter((d) => / stage |阶段/.test(message(d)));
  return { ds, doc, td, text };
}

const spec = (model: string) =>
  `name: s\ndata:\n  train: /d\nmodel:\n${model}\n  pretrained: mindcv:resnet18\ndevice:\n  target: CPU\n`;

test('completion: model.freeze offers the stages of the spec backbone only', () => {
  const resnet = freezeValues('model:\n  backbone: resnet18\n  freeze: |\n');
  assert.deepEqual(resnet, ['none', 'backbone', 'up_to:layer1', 'up_to:layer2', 'up_to:layer3', 'up_to:layer4']);
  const vit = freezeValues('model:\n  backbone: vit_b_32_224\n  freeze: |\n');
  assert.deepEqual(vit, ['none', 'backbone', 'up_to:blocks.2', 'up_to:blocks.5', 'up_to:blocks.8', 'up_to:blocks.11']);
  // no backbone written: the default's (resnet50) stages
  assert.ok(freezeValues('model:\n  freeze: |\n').includes('up_to:layer3'));
  assert.ok(!freezeValues('model:\n  freeze: |\n').some((v) => v.includes('features')));
  const json = freezeValues('{"model": {"backbone": "mobilenet_v3_small_100", "freeze": |}}', 'x.ascend.json');
  assert.deepEqual(json, [
    'none',
    'backbone',
    'up_to:features.3',
    'up_to:features.5',
    'up_to:features.10',
    'up_to:features.16',
  ]);
});

test("completion: a model.unfreeze step's freeze offers the same stages (YAML list items and JSON)", () => {
  const yaml = 'model:\n  backbone: convnext_tiny\n  unfreeze:\n    - epoch: 3\n      freeze: |\n';
  assert.deepEqual(freezeValues(yaml), [
    'none',
    'backbone',
    'up_to:feature.1',
    'up_to:feature.3',
    'up_to:feature.5',
    'up_to:feature.7',
  ]);
  assert.deepEqual(freezeValues('model:\n  backbone: resnet18\n  unfreeze:\n    - freeze: |\n').length, 6);
  const json = '{"model": {"backbone": "resnet34", "unfreeze": [{"epoch": 2, "freeze": |}]}}';
  assert.ok(freezeValues(json, 'x.ascend.json').includes('up_to:layer4'));
  assert.ok(!freezeValues(json, 'x.ascend.json').some((v) => v.includes('blocks')));
});

test('a stage the backbone lacks: an error on the value naming the backbone and its stages, a fix per stage', () => {
  const { ds, doc, td, text } = stageErrors(spec('  backbone: resnet18\n  freeze: up_to:blocks.5'));
  assert.equal(ds.length, 1, JSON.stringify(ds));
  const d = ds[0];
  assert.equal(d.severity, 1);
  assert.equal(d.code, 'model.freeze');
  assert.equal(
    message(d),
    'resnet18 has no stage "blocks.5": its stages are layer1, layer2, layer3, layer4 (set model.freeze to one of: backbone, none, up_to:layer1, up_to:layer2, up_to:layer3, up_to:layer4)',
  );
  assert.equal(text.slice(td.offsetAt(d.range.start), td.offsetAt(d.range.end)), 'up_to:blocks.5');
  const fixes = quickFixes(doc, td, [d]);
  assert.deepEqual(
    fixes.map((f) => f.title),
    ['up_to:layer1', 'up_to:layer2', 'up_to:layer3', 'up_to:layer4'].map((v) => `Change to "${v}"`),
  );
  const edit = fixes[2].edit!.changes![td.uri][0];
  assert.equal(edit.newText, 'up_to:layer3');
  // the same stage on a backbone that has it: nothing
  assert.deepEqual(stageErrors(spec('  backbone: vit_b_32_224\n  freeze: up_to:blocks.5')).ds, []);
  // a misspelt stage is the schema's problem (one diagnostic, not two)
  const { doc: d2, td: t2 } = open(spec('  backbone: resnet18\n  freeze: up_to:layer9'));
  assert.equal(diagnose(d2, t2).filter((x) => x.code === 'model.freeze').length, 1);
});

test('an unfreeze step with a stage the backbone lacks: the error sits on that step, its fix edits it', () => {
  const json = JSON.stringify({
    name: 's',
    data: { train: '/d' },
    model: {
      backbone: 'efficientnet_b0',
      pretrained: 'mindcv:efficientnet_b0',
      unfreeze: [
        { epoch: 2, freeze: 'up_to:features.12' },
        { epoch: 4, freeze: 'up_to:features.8' },
      ],
    },
  });
  const { ds, doc, td, text } = stageErrors(json, 'x.ascend.json');
  assert.equal(ds.length, 1, JSON.stringify(ds));
  assert.equal(ds[0].code, 'model.unfreeze[1].freeze');
  assert.match(message(ds[0]), /^efficientnet_b0 has no stage "features.8": its stages are features.3, features.4, /);
  assert.equal(text.slice(td.offsetAt(ds[0].range.start), td.offsetAt(ds[0].range.end)), '"up_to:features.8"');
  const fix = quickFixes(doc, td, ds).find((f) => f.title === 'Change to "up_to:features.7"');
  assert.equal(fix?.edit?.changes?.[td.uri][0].newText, '"up_to:features.7"');
});

test('hover on model.freeze lists the stages of the spec backbone, not every backbone', () => {
  const { doc, td, offset } = open('model:\n  backbone: mobilenet_v3_large_100\n  fr|eeze: none\n');
  const md = (hover(doc, td, offset)?.contents as MarkupContent).value;
  assert.match(
    md,
    /Stages of mobilenet_v3_large_100: `features.3`, `features.5`, `features.8`, `features.14`, `features.20`/,
  );
  assert.match(
    md,
    /one of `backbone`, `none`, `up_to:features.3`, `up_to:features.5`, `up_to:features.8`, `up_to:features.14`, `up_to:features.20`\n/,
  );
  assert.doesNotMatch(md, /layer1|blocks\.2|feature\.1\b/);
  // on the key of an unset value, every value of this backbone with what it does
  const key = open('model:\n  backbone: vit_b_32_224\n  fr|eeze:\n');
  const keyMd = (hover(key.doc, key.td, key.offset)?.contents as MarkupContent).value;
  assert.match(keyMd, /- `up_to:blocks.8`: /);
  assert.doesNotMatch(keyMd, /- `up_to:layer/);
  // a step of model.unfreeze too
  const step = open('model:\n  backbone: resnet50\n  unfreeze:\n    - epoch: 3\n      freeze: up_to:la|yer3\n');
  const stepMd = (hover(step.doc, step.td, step.offset)?.contents as MarkupContent).value;
  assert.match(stepMd, /Stages of resnet50: `layer1`, `layer2`, `layer3`, `layer4`/);
});

test('zh-cn: the stage error, its fixes and the hover note in Simplified Chinese, names as written', () => {
  setLocale('zh-cn');
  try {
    const { ds, doc, td } = stageErrors(spec('  backbone: resnet18\n  freeze: up_to:blocks.5'));
    assert.equal(ds.length, 1);
    assert.equal(
      message(ds[0]),
      'resnet18 没有阶段 "blocks.5"：它的阶段是 layer1、layer2、layer3、layer4（把 model.freeze 设为以下之一：backbone、none、up_to:layer1、up_to:layer2、up_to:layer3、up_to:layer4）',
    );
    assert.equal(quickFixes(doc, td, ds)[0].title, '改为 "up_to:layer1"');
    const h = open('model:\n  backbone: resnet18\n  fre|eze: none\n');
    assert.match((hover(h.doc, h.td, h.offset)?.contents as MarkupContent).value, /resnet18 的阶段：`layer1`/);
  } finally {
    setLocale('en');
  }
});

// The runner's spec check refuses a model.unfreeze schedule out of order (spec.py, before launch);
// the editor says the same on the step's value, with the values that freeze no more as fixes.
const orderErrors = (text: string, fileName?: string) => {
  const { doc, td } = open(text, fileName);
  const ds = diagnose(doc, td).filter((d) => String(d.code).startsWith('model.unfreeze'));
  return { ds, doc, td, text };
};

test('an unfreeze step that freezes more than the rule before it: an error on its freeze, fixes that freeze no more (YAML)', () => {
  const yaml = spec(
    '  backbone: resnet18\n  freeze: up_to:layer2\n  unfreeze:\n    - epoch: 2\n      freeze: up_to:layer4',
  );
  const { ds, doc, td, text } = orderErrors(yaml);
  assert.equal(ds.length, 1, JSON.stringify(ds));
  assert.equal(ds[0].severity, 1);
  assert.equal(ds[0].code, 'model.unfreeze[0].freeze');
  assert.equal(
    message(ds[0]),
    '"up_to:layer4" freezes more of resnet18 than model.freeze "up_to:layer2": each step of model.unfreeze freezes no more than the rule before it (set model.unfreeze[0].freeze to a rule that freezes no more than "up_to:layer2": none, up_to:layer1, up_to:layer2)',
  );
  assert.equal(text.slice(td.offsetAt(ds[0].range.start), td.offsetAt(ds[0].range.end)), 'up_to:layer4');
  const fixes = quickFixes(doc, td, ds);
  assert.deepEqual(
    fixes.map((f) => f.title),
    ['Change to "none"', 'Change to "up_to:layer1"', 'Change to "up_to:layer2"'],
  );
  assert.equal(fixes[2].edit!.changes![td.uri][0].newText, 'up_to:layer2');
  // In order (backbone, then up_to:layer3, then none): nothing.
  const ok = spec(
    '  backbone: resnet18\n  freeze: backbone\n  unfreeze:\n    - epoch: 2\n      freeze: up_to:layer3\n    - epoch: 4\n      freeze: none',
  );
  assert.deepEqual(orderErrors(ok).ds, []);
});

test('unfreeze steps out of order in JSON: a later step held to the one before it, an epoch that does not increase', () => {
  const json = (unfreeze: object[], freeze = 'backbone', backbone = 'mobilenet_v3_small_100') =>
    JSON.stringify({ name: 's', data: { train: '/d' }, model: { backbone, freeze, unfreeze } });
  const more = orderErrors(
    json([
      { epoch: 2, freeze: 'up_to:features.5' },
      { epoch: 3, freeze: 'up_to:features.10' },
    ]),
    'x.ascend.json',
  );
  assert.equal(more.ds.length, 1, JSON.stringify(more.ds));
  assert.equal(more.ds[0].code, 'model.unfreeze[1].freeze');
  assert.match(
    message(more.ds[0]),
    /^"up_to:features.10" freezes more of mobilenet_v3_small_100 than model.unfreeze\[0\].freeze "up_to:features.5": /,
  );
  assert.equal(
    more.text.slice(more.td.offsetAt(more.ds[0].range.start), more.td.offsetAt(more.ds[0].range.end)),
    '"up_to:features.10"',
  );
  const epochs = orderErrors(
    json([
      { epoch: 3, freeze: 'up_to:features.5' },
      { epoch: 3, freeze: 'none' },
    ]),
    'x.ascend.json',
  );
  assert.equal(epochs.ds.length, 1, JSON.stringify(epochs.ds));
  assert.equal(epochs.ds[0].code, 'model.unfreeze[1].epoch');
  assert.equal(
    message(epochs.ds[0]),
    'epoch 3 does not come after epoch 3 of model.unfreeze[0]: the steps of model.unfreeze take effect in increasing epochs (set model.unfreeze[1].epoch to an epoch after 3, or list the steps in increasing epochs)',
  );
  // A mindcv model's `backbone` freezes its neck too: after its last stage, it freezes more.
  const neck = orderErrors(json([{ epoch: 2, freeze: 'backbone' }], 'up_to:features.16'), 'x.ascend.json');
  assert.deepEqual(
    neck.ds.map((d) => d.code),
    ['model.unfreeze[0].freeze'],
  );
  // A ResNet's `backbone` freezes what up_to:layer4 freezes: the same, allowed.
  assert.deepEqual(
    orderErrors(json([{ epoch: 2, freeze: 'backbone' }], 'up_to:layer4', 'resnet50'), 'x.ascend.json').ds,
    [],
  );
});
