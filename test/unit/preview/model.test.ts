import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import {
  FILES_PER_PROBLEM,
  PreviewFormatError,
  previewSummary,
  progressOf,
  toClassifyView,
  toPreviewView,
} from '../../../src/core/preview/model';
import { listedFiles, validateUiMessage, type PanelState } from '../../../src/shared/previewProtocol';

// Real `preview` answers of the runner on the demo shapes (4 classes): shapes.json with a duplicate
// and a broken file planted in the training folder; shapes-val.json with a val folder that holds
// copies of training images (leakage).
const FIX = path.join(__dirname, '..', 'fixtures', 'preview');
const load = (f: string) => JSON.parse(readFileSync(path.join(FIX, f), 'utf8')) as Record<string, unknown>;

test('classes as bars: counts, bar share of the largest class, tiny flags; imbalance and split in words', () => {
  const v = toPreviewView(load('shapes.json'));
  assert.deepEqual(
    v.classes.map((c) => [c.name, c.train, c.val, c.share, c.tiny]),
    [
      ['blue triangle', 6, 1, 1, true],
      ['green square', 5, 1, 5 / 6, true],
      ['red circle', 5, 1, 5 / 6, true],
      ['yellow cross', 5, 1, 5 / 6, true],
    ],
  );
  assert.equal(v.imbalance?.text, '1.2× (blue triangle 6 / green square 5 training images)');
  assert.equal(v.split, '10% of each class held out for validation (seed 1)');
  assert.equal(v.numTrain, 21);
  assert.equal(v.sizes.width?.p50, 32);
  assert.deepEqual(v.sizes.modes, [['RGB', 25]]);
});

test('problems, worst first, with their files: duplicate, skipped file with its reason, tiny classes', () => {
  const v = toPreviewView(load('shapes.json'));
  assert.deepEqual(
    v.problems.map((p) => p.kind),
    ['duplicate', 'skipped', 'tiny'],
  );
  const [dup, skipped, tiny] = v.problems;
  assert.match(dup.message, /^1 training image is an exact duplicate of another/);
  assert.deepEqual(dup.files, [
    {
      path: '/tmp/s18b-demo/shapes/blue triangle/dup.png',
      note: 'same as /tmp/s18b-demo/shapes/blue triangle/0000.png',
    },
  ]);
  assert.match(skipped.message, /1 file skipped by the scan \(1 UnidentifiedImageError\)/);
  assert.equal(skipped.files[0].path, '/tmp/s18b-demo/shapes/blue triangle/broken.jpg');
  assert.match(skipped.files[0].note, /cannot identify image file/);
  assert.match(tiny.message, /4 classes with fewer than 20 training images: blue triangle, green square/);
});

test('leakage: validation copies of training images come first, each naming its training original', () => {
  const v = toPreviewView(load('shapes-val.json'));
  assert.equal(v.split, 'validation folder /tmp/s18b-demo/val');
  const leak = v.problems[0];
  assert.equal(leak.kind, 'leak');
  assert.match(leak.message, /^3 validation images are copies of training images \(leakage/);
  assert.ok(
    leak.files.some(
      (f) =>
        f.path === '/tmp/s18b-demo/val/red circle/leak.png' &&
        f.note === 'copy of /tmp/s18b-demo/shapes/red circle/0001.png',
    ),
    JSON.stringify(leak.files),
  );
  assert.equal(previewSummary(v).counts, '4 classes, 25 train / 9 val images, imbalance 1.17×');
  assert.match(previewSummary(v).problems, /leakage.*; .*duplicate/);
});

test('thumbnails: per class, all three views, within the byte budget the runner reports', () => {
  const v = toPreviewView(load('shapes-val.json'));
  assert.equal(v.thumbnails.classes.length, 4);
  const s = v.thumbnails.classes[0].samples[0];
  for (const k of ['original', 'train', 'eval'] as const) assert.match(s[k] ?? '', /^\/9j\//, `${k} is a JPEG`);
  const total = v.thumbnails.classes
    .flatMap((c) => c.samples)
    .reduce((n, t) => n + t.original.length + (t.train?.length ?? 0) + (t.eval?.length ?? 0), 0);
  assert.equal(total, v.thumbnails.bytes);
});

test("the eval thumbnails' note says the run's preprocessing, its notes and warnings; nothing from a runner that sends none", () => {
  const doc = load('shapes-val.json');
  assert.deepEqual(toPreviewView(doc).thumbnails.evalNote, [
    'imagenet preprocessing: shorter side resized to 256 px (bilinear), centre crop 224 px; ' +
      'mean [123.7,116.3,103.5], std [58.4,57.1,57.4]',
  ]);
  const th = doc.thumbnails as Record<string, unknown>;
  const base = th.preprocess as Record<string, unknown>;
  const view = (preprocess: object) => toPreviewView({ ...doc, thumbnails: { ...th, preprocess } }).thumbnails.evalNote;
  const squash = view({ ...base, name: 'timm', crop_mode: 'squash', resize: 224, mean: [127.5, 127.5, 127.5] });
  assert.match(squash[0], /^timm preprocessing: both sides resized to 224 px .*; mean \[127\.5,127\.5,127\.5\],/);
  const pending = view({ ...base, name: 'timm', pending_config: true });
  assert.match(pending[1], /config\.json is not on this machine yet: the run reads it when it starts/);
  const notHere = view({ ...base, pending_weights: true });
  assert.match(notHere[1], /weights are not on this machine yet: the run picks their preprocessing by the file/);
  const unresolved = view({ ...base, unresolved: 'PretrainedError: x.ckpt is not a usable checkpoint' });
  assert.match(
    unresolved[1],
    /could not be worked out here \(PretrainedError: x\.ckpt .*\): the runner's own is shown/,
  );
  // A warning the runner gives with it, worded from its code (the English message is the fallback).
  const assumed = { code: 'preprocess_assumed', message: 'runner text', details: { preprocess: 'torchvision' } };
  const warned = view({ ...base, name: 'torchvision', warnings: [assumed, { code: 'new_code', message: 'as sent' }] });
  assert.equal(warned.length, 3);
  assert.match(warned[1], /torchvision/);
  assert.equal(warned[2], 'as sent');
  assert.deepEqual(toPreviewView(load('shapes.json')).thumbnails.evalNote, []);
  assert.throws(() => view({ name: 'x' }), /thumbnails\.preprocess\.interpolation/);
});

test('a file list is capped per problem and the rest counted', () => {
  const doc = load('shapes.json');
  const first = Array.from({ length: 100 }, (_, i) => ({ path: `/d/a/${i}.jpg`, reason: 'OSError: truncated' }));
  const v = toPreviewView({ ...doc, skipped: { count: 250, by_reason: { OSError: 250 }, first } });
  const skipped = v.problems.find((p) => p.kind === 'skipped')!;
  assert.equal(skipped.files.length, FILES_PER_PROBLEM);
  assert.equal(skipped.more, 250 - FILES_PER_PROBLEM);
});

test('a document from another runner version: an error that names the field', () => {
  const doc = load('shapes.json');
  assert.throws(
    () => toPreviewView({ ...doc, classes: 'x' }),
    (e: unknown) => e instanceof PreviewFormatError && /"classes"/.test((e as Error).message),
  );
  assert.throws(
    () => toPreviewView({ ...doc, images: { ...(doc.images as object), count: 'many' } }),
    /"images.count"/,
  );
  assert.throws(() => toPreviewView(null), PreviewFormatError);
});

test('progress lines', () => {
  assert.deepEqual(progressOf({ progress: { done: 3, total: 9 } }), { done: 3, total: 9 });
  assert.equal(progressOf({ train: '/d' }), undefined);
  assert.equal(progressOf({ progress: { done: '3' } }), undefined);
});

test('predict answer: top-5 per image, a broken file keeps its own error, local images attached', () => {
  const raw = {
    ckpt: '/runs/r1/checkpoints/a.ckpt',
    run_dir: '/runs/r1',
    classes: ['a', 'b', 'c'],
    image_size: 32,
    device: 'CPU',
    amp_level: 'O2',
    predictions: [
      {
        file: '/img/0.png',
        top: [
          { class: 'b', prob: 0.7 },
          { class: 'a', prob: 0.2 },
          { class: 'c', prob: 0.1 },
        ],
      },
      { file: '/img/x.jpg', error: { kind: 'not_an_image', message: 'UnidentifiedImageError: cannot identify' } },
    ],
    ok: 1,
    failed: 1,
  };
  const v = toClassifyView(raw, new Map([['/img/0.png', 'data:image/png;base64,AAAA']]));
  assert.equal(v.classes, 3);
  assert.deepEqual(v.predictions[0].top?.[0], { class: 'b', prob: 0.7 });
  assert.equal(v.predictions[0].image, 'data:image/png;base64,AAAA');
  assert.equal(v.predictions[1].top, null);
  assert.equal(v.predictions[1].error, 'not_an_image: UnidentifiedImageError: cannot identify');
  assert.equal(v.predictions[1].name, 'x.jpg');
});

test('messages from the panel: only listed files may be opened', () => {
  const v = toPreviewView(load('shapes.json'));
  const state: PanelState = {
    kind: 'preview',
    subject: v.train,
    target: 'this machine',
    ssh: false,
    status: 'done',
    activity: null,
    progress: null,
    error: null,
    preview: v,
    classify: null,
  };
  const files = listedFiles(state);
  assert.ok(files.has('/tmp/s18b-demo/shapes/blue triangle/broken.jpg'));
  assert.ok(files.has(v.thumbnails.classes[0].samples[0].file));
  assert.deepEqual(
    validateUiMessage({ type: 'openFile', path: '/tmp/s18b-demo/shapes/blue triangle/dup.png' }, files),
    {
      ok: true,
      message: { type: 'openFile', path: '/tmp/s18b-demo/shapes/blue triangle/dup.png' },
    },
  );
  assert.equal(validateUiMessage({ type: 'openFile', path: '/etc/passwd' }, files).ok, false);
  assert.equal(validateUiMessage({ type: 'openFile' }, files).ok, false);
  assert.equal(validateUiMessage({ type: 'cancel' }, files).ok, true);
  assert.equal(validateUiMessage({ type: 'rm -rf' }, files).ok, false);
  assert.equal(validateUiMessage('ready', files).ok, false);
});

test('the preview names the train augmentation preset (data.augment), "none" as off', () => {
  const clean = load('shapes-clean.json');
  assert.equal(toPreviewView(clean).augment, 'basic');
  assert.equal(toPreviewView({ ...clean, augment: 'randaugment' }).augment, 'randaugment');
  assert.equal(toPreviewView({ ...clean, augment: 'none' }).augment, null);
});
