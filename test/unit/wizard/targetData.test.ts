// What the wizard takes from the runner's `probe` of a target's path (the same for an SSH machine as
// for this one), and the backbone a run starting from a run's checkpoint builds.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RECIPE_DEFAULTS, type WizardChoices } from '../../../src/core/spec/builder';
import { summaryLines, withPretrained } from '../../../src/core/wizard/summary';
import { backboneForWeights, dataFactsOf, weightsFactsOf } from '../../../src/core/wizard/targetData';

const folder = { path: '/d', resolved: '/d', kind: 'folder' as const, classes: ['a', 'b', 'c'], count: 3 };

test('a probed image folder gives the counts and typical size the summary and the defaults use', () => {
  assert.deepEqual(dataFactsOf({ ...folder, images: 90, typical_size: 48 }), {
    classes: 3,
    images: 90,
    typicalSize: 48,
  });
  assert.deepEqual(dataFactsOf({ ...folder, images: 90, typical_size: null }), {
    classes: 3,
    images: 90,
    typicalSize: undefined,
  });
});

test('no facts from a folder that is not an image folder, a file, a missing path or an old runner', () => {
  assert.deepEqual(dataFactsOf({ ...folder, images: 0, typical_size: null }), {});
  assert.deepEqual(dataFactsOf({ ...folder, count: 1, classes: ['a'], images: 9, typical_size: 32 }), {});
  assert.deepEqual(dataFactsOf(folder), {}, 'a runner before this change sends no images');
  assert.deepEqual(dataFactsOf({ path: '/f', resolved: '/f', kind: 'file', bytes: 3 }), {});
  assert.deepEqual(dataFactsOf({ path: '/m', resolved: '/m', kind: 'missing' }), {});
});

test("a run's checkpoint names its backbone; a loose file names none", () => {
  const ckpt = { path: '/r/checkpoints/a.ckpt', resolved: '/r/checkpoints/a.ckpt', kind: 'file' as const, bytes: 9 };
  assert.deepEqual(weightsFactsOf({ ...ckpt, run: { backbone: 'resnet18', image_size: 32 } }), {
    backbone: 'resnet18',
    imageSize: 32,
  });
  assert.deepEqual(weightsFactsOf({ ...ckpt, run: { backbone: 'resnet34', image_size: null } }), {
    backbone: 'resnet34',
    imageSize: undefined,
  });
  assert.deepEqual(weightsFactsOf(ckpt), {});
  assert.deepEqual(weightsFactsOf(folder), {});
});

test('weights trained as resnet18 make the run resnet18, unless the user chose a backbone', () => {
  assert.equal(backboneForWeights('resnet50', { backbone: 'resnet18' }, false), 'resnet18');
  assert.equal(backboneForWeights('resnet50', { backbone: 'resnet18' }, true), 'resnet50');
  assert.equal(backboneForWeights('resnet50', {}, false), 'resnet50', 'a file that does not say');
  assert.equal(backboneForWeights('resnet50', { backbone: 'vit_b' }, false), 'resnet50', 'not a backbone we build');
});

test("a catalog source picked from another backbone's weights sets its backbone, even over a chosen one", () => {
  // Its file loads into nothing else: mindcv:convnext_tiny in a resnet50 would fail at the first load.
  const convnext = { backbone: 'convnext_tiny', catalog: true };
  assert.equal(backboneForWeights('resnet50', convnext, true), 'convnext_tiny');
  assert.equal(backboneForWeights('resnet50', convnext, false), 'convnext_tiny');
  assert.equal(backboneForWeights('resnet50', { catalog: true }, true), 'resnet50', 'an hf-hub name: no backbone');
});

test('the summary says the backbone came from the weights', () => {
  const c: WizardChoices = withPretrained(
    { ...RECIPE_DEFAULTS, backbone: 'resnet18', name: 'x', dataTrain: '/d' },
    '/r/checkpoints/a.ckpt',
    undefined,
  );
  const line = (w: { backbone?: string }) =>
    summaryLines({ choices: c, target: 'This machine', weights: w }).find((l) => l.key === 'backbone');
  assert.deepEqual(line({ backbone: 'resnet18' })?.note, 'what the weights were trained as');
  assert.equal(line({})?.note, undefined);
});
