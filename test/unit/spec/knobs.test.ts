import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildSpec, choicesFromSpec, mergeSpec, RECIPE_DEFAULTS } from '../../../src/core/spec/builder';
import { KNOBS, knobChoices, knobsFromSpec, parseKnobNumber, setKnob, type Knobs } from '../../../src/core/spec/knobs';
import { parseSpecText } from '../../../src/core/spec/file';
import { checkSpec } from '../../../src/core/spec/schema';
import { writeSpec } from '../../../src/core/spec/writer';

const base = { ...RECIPE_DEFAULTS, name: 'k', dataTrain: '/data/flowers' };

test('chosen knobs land in the built spec where the runner reads them; the spec validates', () => {
  const knobs: Knobs = {};
  setKnob(knobs, 'data.augment', 'trivialaugment');
  setKnob(knobs, 'data.mixup', 0.2);
  setKnob(knobs, 'train.label_smoothing', 0.1);
  setKnob(knobs, 'train.early_stopping.patience', 3);
  setKnob(knobs, 'train.lr_schedule', 'plateau');
  setKnob(knobs, 'train.plateau.patience', 4);
  setKnob(knobs, 'train.ema', 0.999);
  setKnob(knobs, 'train.backbone_lr_mult', 0.1);
  setKnob(knobs, 'train.accumulate_steps', 4);
  setKnob(knobs, 'data.sampling', 'balanced');
  setKnob(knobs, 'train.class_weights', 'auto');
  const spec = buildSpec({ ...base, knobs });
  assert.equal(spec.data.augment, 'trivialaugment');
  assert.equal(spec.data.mixup, 0.2);
  assert.equal(spec.data.sampling, 'balanced');
  assert.deepEqual(spec.train.early_stopping, { patience: 3 });
  assert.deepEqual(spec.train.plateau, { patience: 4 });
  assert.equal(spec.train.lr_schedule, 'plateau');
  assert.equal(spec.train.ema, 0.999);
  assert.equal(spec.train.backbone_lr_mult, 0.1);
  assert.equal(spec.train.accumulate_steps, 4);
  assert.equal(spec.train.class_weights, 'auto');
  assert.equal(spec.train.label_smoothing, 0.1);
  assert.deepEqual(checkSpec(spec), []);
  // Read back from the file, the wizard shows the same knobs.
  assert.deepEqual(choicesFromSpec(spec).knobs, knobs);
});

test('defaults are left out of the written spec: a knob set back to its default disappears', () => {
  const knobs: Knobs = {};
  setKnob(knobs, 'data.augment', 'basic'); // the default
  setKnob(knobs, 'train.ema', null); // off is the default
  setKnob(knobs, 'train.accumulate_steps', 2);
  setKnob(knobs, 'train.accumulate_steps', 1);
  assert.deepEqual(knobs, {});
  const spec = buildSpec({ ...base, knobs });
  assert.deepEqual(Object.keys(spec.data).sort(), ['batch_size', 'train']);
  assert.deepEqual(Object.keys(spec.train).sort(), ['epochs', 'lr', 'momentum', 'optimizer']);
});

test('values are checked with the schema rules, the message names the field and its range', () => {
  assert.deepEqual(parseKnobNumber('train.label_smoothing', '0.1'), { value: 0.1 });
  assert.deepEqual(parseKnobNumber('train.label_smoothing', '1.5'), {
    error: 'train.label_smoothing must be >= 0.0 and <= 1.0',
  });
  assert.deepEqual(parseKnobNumber('train.accumulate_steps', '2.5'), {
    error: 'train.accumulate_steps must be a whole number',
  });
  assert.deepEqual(parseKnobNumber('train.ema', '0'), { error: 'train.ema must be > 0.0 and <= 0.99999' });
  assert.deepEqual(parseKnobNumber('train.ema', ''), { value: null }, 'empty turns a nullable knob off');
  assert.match((parseKnobNumber('data.mixup', 'x') as { error: string }).error, /data\.mixup must be a number/);
  // The parser refuses exactly what the schema refuses, on each number knob's edges.
  for (const k of KNOBS.filter((k) => k.kind === 'number'))
    for (const text of ['-1', '0', '0.5', '1', '1.5', '100000', '1e9']) {
      const p = parseKnobNumber(k.path, text);
      const spec = buildSpec({ ...base, knobs: { [k.path]: Number(text) } });
      assert.equal('value' in p, checkSpec(spec).length === 0, `${k.path} = ${text}`);
    }
  assert.deepEqual(knobChoices('data.augment'), ['basic', 'none', 'randaugment', 'trivialaugment', 'autoaugment']);
  assert.deepEqual(knobChoices('train.lr_schedule')[0], 'constant');
});

test("a spec file's knobs: kept with its other fields when the wizard keeps them, removed when reset", () => {
  const file = {
    name: 'f',
    data: { train: '/d', mixup: 0.4, augment: 'bogus' },
    train: { early_stopping: { metric: 'val_acc', patience: 5, min_delta: 0.01 }, ema: 0.99, lr_step_size: 7 },
  };
  const knobs = knobsFromSpec(file);
  assert.deepEqual(knobs, {
    'data.mixup': 0.4,
    'train.early_stopping.patience': 5,
    'train.early_stopping.metric': 'val_acc',
    'train.ema': 0.99,
  });
  setKnob(knobs, 'train.ema', null);
  setKnob(knobs, 'train.early_stopping.patience', 2);
  const merged = mergeSpec(file, buildSpec({ ...base, ...choicesFromSpec(file), knobs })) as {
    data: Record<string, unknown>;
    train: Record<string, unknown>;
  };
  assert.equal(merged.data.mixup, 0.4);
  assert.deepEqual(merged.train.early_stopping, { metric: 'val_acc', patience: 2, min_delta: 0.01 });
  assert.equal('ema' in merged.train, false, 'reset to off: gone from the file');
  assert.equal(merged.train.lr_step_size, 7, 'a field the wizard does not ask about stays');
});

test('the saved YAML spec has the knobs with a comment each and reads back as the same object', () => {
  const spec = buildSpec({
    ...base,
    knobs: { 'train.early_stopping.patience': 3, 'data.augment': 'randaugment', 'train.ema': 0.999 },
  });
  const text = writeSpec(spec as unknown as Record<string, unknown>, 'yaml');
  assert.match(text, / {2}# Augmentation of training images[^\n]*\n( {2}# [^\n]*\n)* {2}augment: randaugment/);
  assert.match(text, / {2}# Stop the run when[^\n]*\n {2}early_stopping:\n {4}# Epochs without[^\n]*\n {4}patience: 3/);
  assert.match(text, / {2}# Decay of an exponential[^\n]*\n {2}ema: 0.999/);
  assert.deepEqual(parseSpecText(text, 'x.ascend.yaml'), spec);
});
