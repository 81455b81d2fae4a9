import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseSpecText, SpecFileError } from '../../../src/core/spec/file';

test('a YAML spec becomes the same object as its JSON twin', () => {
  const yaml = `# a linear probe
name: cats vs dogs
data:
  train: ./data/train   # relative to the file
  image_size: 224
model: {backbone: resnet50, freeze: backbone, pretrained: null}
amp:
  level: O2
  init_scale: 16777216
`;
  const json =
    '{"name":"cats vs dogs","data":{"train":"./data/train","image_size":224},' +
    '"model":{"backbone":"resnet50","freeze":"backbone","pretrained":null},"amp":{"level":"O2","init_scale":16777216}}';
  assert.deepEqual(parseSpecText(yaml, 'probe.ascend.yaml'), parseSpecText(json, 'probe.ascend.json'));
});

test('YAML 1.1 surprises stay strings under the core schema: O2 and "no" are not numbers or booleans', () => {
  const spec = parseSpecText('amp: {level: O2}\nname: no\n', 'x.ascend.yml') as {
    amp: { level: unknown };
    name: unknown;
  };
  assert.equal(spec.amp.level, 'O2');
  assert.equal(spec.name, 'no');
});

test('syntax errors say where, for YAML and JSON', () => {
  assert.throws(
    () => parseSpecText('data:\n  train: [unclosed\n', 'x.ascend.yaml'),
    (e: unknown) => e instanceof SpecFileError && /not valid YAML at line \d+ column \d+/.test(e.message),
  );
  assert.throws(
    () => parseSpecText('name: a\nname: b\n', 'x.ascend.yaml'),
    SpecFileError,
    'duplicate keys are an error',
  );
  assert.throws(
    () => parseSpecText('{"name": "x",\n "data": {"train": }}', 'x.ascend.json'),
    (e: unknown) => e instanceof SpecFileError && e.line === 2 && /line 2 column/.test(e.message),
  );
});

test('a JSON key written twice is refused, naming the key, its object and its line (JSON.parse would keep the last)', () => {
  const text = '{\n  "train": {"lr": 0.1, "epochs": 2},\n  "data": {"train": "d"},\n  "train": {"lr": 5}\n}\n';
  assert.throws(
    () => parseSpecText(text, 'x.ascend.json'),
    (e: SpecFileError) =>
      e.message === 'duplicate key "train" in the spec at line 4: keep one "train" and delete the others' &&
      e.line === 4,
  );
  assert.throws(
    () => parseSpecText('{"train": {"lr": 0.1,\n "lr": 9}}', 'x.ascend.json'),
    /duplicate key "lr" in train at line 2/,
  );
  // Equal keys in different objects, or in objects inside a list, are not duplicates.
  assert.deepEqual(parseSpecText('{"a": {"x": 1}, "b": {"x": 2}, "c": [{"x": 1}, {"x": 2}]}', 'x.ascend.json'), {
    a: { x: 1 },
    b: { x: 2 },
    c: [{ x: 1 }, { x: 2 }],
  });
});
