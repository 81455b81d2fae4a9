import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import {
  absolutizeSpecPaths,
  buildSpec,
  checkName,
  choicesFromSpec,
  defaultName,
  freezeModesFor,
  mergeSpec,
  parseNumberField,
  problemLines,
  RECIPE_DEFAULTS,
  slugOf,
  specText,
  summarizeSpec,
  targetSpecPath,
} from '../../../src/core/spec/builder';

test('the recipe defaults: resnet50, frozen backbone, O2 dynamic, Momentum 0.01/0.9, batch 32, 10 epochs', () => {
  const spec = buildSpec({ ...RECIPE_DEFAULTS, name: ' flowers ', dataTrain: '/data/flowers' });
  assert.deepEqual(spec, {
    name: 'flowers',
    data: { train: '/data/flowers', batch_size: 32 },
    model: { backbone: 'resnet50', pretrained: null, freeze: 'backbone' },
    train: { epochs: 10, optimizer: 'momentum', lr: 0.01, momentum: 0.9 },
    amp: { level: 'O2', loss_scale: 'dynamic' },
    sink: { enabled: true },
    checkpoint: { every_steps: 1000, keep_max: 5 },
    device: { ids: [0] },
  });
  assert.ok(specText(spec).endsWith('}\n'));
});

test('choices go where the runner reads them; a path with odd characters is kept as it is', () => {
  const odd = "/d/it's $(x) `y`; ü";
  const spec = buildSpec({
    name: 'r',
    dataTrain: odd,
    backbone: 'resnet18',
    pretrained: '/w/r18.ckpt',
    freeze: 'up_to:layer2',
    ampLevel: 'O0',
    epochs: 3,
    batchSize: 8,
    lr: 0.5,
    devices: 1,
  });
  assert.equal(spec.data.train, odd);
  assert.equal(spec.model.pretrained, '/w/r18.ckpt');
  assert.equal(spec.model.freeze, 'up_to:layer2');
  assert.equal(spec.amp.level, 'O0');
  assert.deepEqual([spec.train.epochs, spec.data.batch_size, spec.train.lr], [3, 8, 0.5]);
});

test('number fields take the spec ranges: integers where the runner wants them, lr > 0', () => {
  assert.deepEqual(parseNumberField('epochs', ' 12 '), { value: 12 });
  assert.ok('error' in parseNumberField('epochs', '0'));
  assert.ok('error' in parseNumberField('epochs', '2.5'));
  assert.ok('error' in parseNumberField('epochs', ''));
  assert.ok('error' in parseNumberField('batchSize', '65537'));
  assert.deepEqual(parseNumberField('lr', '1e-3'), { value: 0.001 });
  assert.ok('error' in parseNumberField('lr', '0'));
  assert.ok('error' in parseNumberField('lr', 'abc'));
  assert.deepEqual(parseNumberField('lr', '100'), { value: 100 });
});

test('names: empty is refused; the default comes from the data folder', () => {
  assert.ok(checkName('  '));
  assert.equal(checkName('x'), undefined);
  assert.equal(defaultName('/data/flowers/', 'resnet50'), 'flowers-resnet50');
  assert.equal(defaultName('/', 'resnet18'), 'run-resnet18');
});

test('a spec file back to choices: known values kept, wrong types and unknown enums dropped', () => {
  const spec = buildSpec({ ...RECIPE_DEFAULTS, name: 'a', dataTrain: '/d', backbone: 'resnet34', epochs: 4 });
  assert.deepEqual(choicesFromSpec(JSON.parse(specText(spec))), {
    name: 'a',
    dataTrain: '/d',
    backbone: 'resnet34',
    freeze: 'backbone',
    ampLevel: 'O2',
    epochs: 4,
    batchSize: 32,
    lr: 0.01,
    devices: 1,
    deviceIds: [0],
    // the spelled-out recipe parts come back too, so a spec file keeps them through the wizard
    sink: true,
    lossScale: 'dynamic',
    checkpointEverySteps: 1000,
    checkpointKeepMax: 5,
  });
  // picked devices survive the round trip (msrun trains on exactly these)
  const picked = buildSpec({ ...RECIPE_DEFAULTS, name: 'b', dataTrain: '/d', devices: 2, deviceIds: [2, 5] });
  assert.deepEqual(picked.device.ids, [2, 5]);
  assert.deepEqual(choicesFromSpec(picked), { ...choicesFromSpec(picked), devices: 2, deviceIds: [2, 5] });
  assert.deepEqual(choicesFromSpec({ model: { backbone: 'vgg', freeze: 3 }, train: { epochs: 2.5 } }), {});
  assert.deepEqual(choicesFromSpec(null), {});
  assert.deepEqual(choicesFromSpec({ data: { train: 'rel/dir' } }), { dataTrain: 'rel/dir' });
});

test('the tooltip summary fills what a spec leaves out with the recipe defaults', () => {
  assert.equal(
    summarizeSpec({ model: { backbone: 'resnet18' }, train: { epochs: 3 } }),
    'resnet18 · freeze backbone · O2 · 3 epochs · batch 32 · lr 0.01',
  );
});

test('starting from a spec file keeps the fields the wizard does not ask about', () => {
  const file = {
    name: 'old',
    data: { train: '/d', image_size: 32, val_split: 0.2 },
    train: { lr_schedule: 'cosine', epochs: 2 },
    extra: 1,
  };
  const merged = mergeSpec(
    file,
    buildSpec({ ...RECIPE_DEFAULTS, ...choicesFromSpec(file), name: 'new', dataTrain: '/d' }),
  );
  assert.deepEqual(merged.data, { train: '/d', image_size: 32, val_split: 0.2, batch_size: 32 });
  assert.deepEqual(merged.train, { lr_schedule: 'cosine', epochs: 2, optimizer: 'momentum', lr: 0.01, momentum: 0.9 });
  assert.equal(merged.name, 'new');
  assert.equal(merged.extra, 1);
});

test('spec paths on the target and validate problems as lines', () => {
  assert.equal(slugOf(' -my run: ü/x. '), 'my-run-x');
  assert.equal(slugOf('...'), 'run');
  assert.equal(
    targetSpecPath('flowers 1', new Date('2026-12-02T10:30:05.123Z')),
    '~/.ascend-finetune/specs/20261202-103005-flowers-1.json',
  );
  assert.deepEqual(
    problemLines({
      ok: false,
      problems: [
        { path: 'data.train', message: 'folder not found: /x', fix: 'pick an existing folder' },
        { path: '', message: 'bad JSON' },
      ],
    }),
    ['data.train: folder not found: /x (pick an existing folder)', 'bad JSON'],
  );
  assert.deepEqual(problemLines(undefined), []);
});

test('a spec file started from elsewhere keeps pointing at its own data', () => {
  const spec = {
    name: 'x',
    data: { train: 'data/flowers', val: null, image_size: 32 },
    model: { pretrained: '../w.ckpt', backbone: 'resnet18' },
  };
  assert.deepEqual(absolutizeSpecPaths(spec, '/ws/specs', path.posix.join), {
    name: 'x',
    data: { train: '/ws/specs/data/flowers', val: null, image_size: 32 },
    model: { pretrained: '/ws/w.ckpt', backbone: 'resnet18' },
  });
  assert.deepEqual(
    absolutizeSpecPaths({ data: { train: '/abs' }, model: { pretrained: '~/w.ckpt' } }, '/ws', path.posix.join),
    { data: { train: '/abs' }, model: { pretrained: '~/w.ckpt' } },
  );
  assert.deepEqual(absolutizeSpecPaths({ name: 'n' }, '/ws', path.posix.join), { name: 'n' });
  assert.equal(absolutizeSpecPaths(null, '/ws', path.posix.join), null);
});

test("the wizard's freeze choices are the chosen backbone's stages only", () => {
  assert.deepEqual(freezeModesFor('resnet50'), [
    'backbone',
    'none',
    'up_to:layer1',
    'up_to:layer2',
    'up_to:layer3',
    'up_to:layer4',
  ]);
  assert.deepEqual(freezeModesFor('convnext_tiny'), [
    'backbone',
    'none',
    'up_to:feature.1',
    'up_to:feature.3',
    'up_to:feature.5',
    'up_to:feature.7',
  ]);
  assert.ok(!freezeModesFor('vit_b_32_224').includes('up_to:layer4'));
});
