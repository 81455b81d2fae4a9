import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import {
  buildSpec,
  choicesFromSpec,
  RECIPE_DEFAULTS,
  type Backbone,
  type WizardChoices,
} from '../../../src/core/spec/builder';
import { imageSizeFor, resolveDefaults, trainImages } from '../../../src/core/wizard/defaults';
import { fixCommand, healthOf, runtimeRequirements, venvTaskArgs } from '../../../src/core/wizard/health';
import {
  describeImageFolder,
  findImageFolders,
  headerDimensions,
  imageFolderDescription,
} from '../../../src/core/wizard/imageFolders';
import { InteractionCounter, SHORT_PATH_BUDGET, shortPathPrompts } from '../../../src/core/wizard/interactions';
import { recallChoices, rememberChoices, rememberKey } from '../../../src/core/wizard/remember';
import { refitFreeze, summaryLines, withPretrained } from '../../../src/core/wizard/summary';

const CPU_DOCTOR = {
  python: { version: '3.11.7', executable: '/x/.venv/bin/python', ok: true },
  mindspore: { ok: true, version: '2.10.0', backends: { CPU: true, Ascend: false } },
  npu: { devices: [] },
  cpu_count: 2,
};
const ASCEND_DOCTOR = {
  ...CPU_DOCTOR,
  mindspore: { ok: true, version: '2.10.0', backends: { CPU: true, Ascend: true } },
  npu: { devices: [{ id: 0 }, { id: 1 }] },
  cpu_count: 192,
};

test('health: a Python without numpy is one sentence naming the Python and the import error', () => {
  const h = healthOf({
    python: { version: '3.11.2', executable: '/usr/bin/python3', ok: true },
    mindspore: { ok: false, error: "ModuleNotFoundError: No module named 'numpy'" },
  });
  assert.equal(h.ok, false);
  if (h.ok) return;
  assert.equal(h.problem, 'mindspore');
  assert.match(
    h.sentence,
    /^The Python at \/usr\/bin\/python3 cannot import MindSpore \(ModuleNotFoundError: No module named 'numpy'\)/,
  );
  assert.doesNotMatch(h.sentence, /\.\.\./);
});

test('health: CPU only and cores from a doctor report; a missing Python from the failure row', () => {
  const h = healthOf(CPU_DOCTOR);
  assert.deepEqual(h, { ok: true, cpuOnly: true, cpuCount: 2, npus: 0, mindspore: '2.10.0' });
  const a = healthOf(ASCEND_DOCTOR);
  assert.equal(a.ok && a.cpuOnly, false);
  const f = healthOf(undefined, { label: 'Python', description: 'not found', problem: true }, '/nope/python');
  assert.equal(f.ok, false);
  assert.match(!f.ok ? f.sentence : '', /No Python was found at \/nope\/python/);
});

test('hint rows: every fix has a command that does what it says', () => {
  const row = (label: string, fix = 'x') => ({ label, description: '', problem: true, fix });
  assert.equal(fixCommand(row('MindSpore'), 'local', 'local').command, 'ascend.setPythonPath');
  assert.equal(fixCommand(row('Python'), 'local', 'local').command, 'ascend.setPythonPath');
  assert.equal(fixCommand(row('SSH', 'log in once'), 'ssh', 'ssh:a').command, 'ascend.sshLogin');
  assert.equal(fixCommand(row('CANN'), 'ssh', 'ssh:a').command, 'ascend.openTargetSettings');
  assert.equal(fixCommand(row('MindSpore'), 'ssh', 'ssh:a').command, 'ascend.openTargetSettings');
  assert.equal(fixCommand(row('Doctor', 'see the output channel'), 'local', 'local').command, 'ascend.showLog');
  assert.equal(fixCommand(row('NPU'), 'ssh', 'ssh:a').command, 'ascend.showLog');
});

test('venv task: the runner requirements without test tools, paths as argv, never in the script', () => {
  assert.deepEqual(
    runtimeRequirements('# pinned\nmindspore==2.10.0\npillow>=10,<13\nnumpy>=1.26,<2\npytest>=8,<10\n'),
    ['mindspore==2.10.0', 'pillow>=10,<13', 'numpy>=1.26,<2'],
  );
  const args = venvTaskArgs("/home/o'brien/venv", ['mindspore==2.10.0']);
  assert.equal(args[0], '-c');
  assert.ok(!args[1].includes("o'brien"));
  assert.deepEqual(args.slice(2), ['sh', "/home/o'brien/venv", 'python3.11', 'mindspore==2.10.0']);
});

test('defaults on a CPU target: O0 without loss scaling, no sink, workers at most the cores, a checkpoint per epoch', () => {
  const r = resolveDefaults({
    health: healthOf(CPU_DOCTOR),
    data: { images: 120, typicalSize: 48 },
    epochs: 10,
    devices: 1,
  });
  assert.equal(r.ampLevel, 'O0');
  assert.equal(r.lossScale, 'none');
  assert.equal(r.sink, false);
  assert.equal(r.workers, 2);
  // 108 training images at batch 32: 3 steps per epoch, so at most 3 steps between checkpoints
  assert.equal(trainImages(120), 108);
  assert.equal(r.batchSize, 32);
  assert.equal(r.checkpointEverySteps, 3);
  assert.equal(r.imageSize, 48);
  assert.ok(r.reasons.ampLevel && r.reasons.sink && r.reasons.workers && r.reasons.checkpointEverySteps);
});

test('defaults on an Ascend target keep the recipe; a batch larger than the data is lowered, a chosen one is kept', () => {
  const r = resolveDefaults({ health: healthOf(ASCEND_DOCTOR), data: {}, epochs: 10, devices: 2 });
  assert.deepEqual(
    [r.ampLevel, r.lossScale, r.sink, r.workers, r.checkpointEverySteps, r.imageSize],
    // data.workers 0 is the runner's 'cores per rank': 192 cores over 2 ranks
    ['O2', 'dynamic', true, 96, 1000, 224],
  );
  const small = resolveDefaults({ health: healthOf(CPU_DOCTOR), data: { images: 20 }, epochs: 1, devices: 1 });
  assert.equal(small.batchSize, 18);
  assert.equal(small.checkpointEverySteps, 1);
  const chosen = resolveDefaults({ health: undefined, data: { images: 20 }, epochs: 1, devices: 1, batchSize: 64 });
  assert.equal(chosen.batchSize, 64);
});

test('image size: the data typical size, at least 16, at most the backbone 224', () => {
  assert.equal(imageSizeFor(48), 48);
  assert.equal(imageSizeFor(500), 224);
  assert.equal(imageSizeFor(8), 16);
  assert.equal(imageSizeFor(undefined), 224);
});

test('the spec carries the resolved settings, and a spec file gives them back', () => {
  const c: WizardChoices = {
    ...RECIPE_DEFAULTS,
    name: 'n',
    dataTrain: '/d',
    ampLevel: 'O0',
    imageSize: 48,
    workers: 2,
    sink: false,
    lossScale: 'none',
    checkpointEverySteps: 3,
  };
  const spec = buildSpec(c);
  assert.equal(spec.data.image_size, 48);
  assert.equal(spec.data.workers, 2);
  assert.deepEqual(spec.amp, { level: 'O0', loss_scale: 'none' });
  assert.deepEqual(spec.sink, { enabled: false });
  assert.equal(spec.checkpoint.every_steps, 3);
  const back = choicesFromSpec(spec);
  assert.deepEqual(
    [back.imageSize, back.workers, back.sink, back.lossScale, back.checkpointEverySteps],
    [48, 2, false, 'none', 3],
  );
  // Unset: not written (the schema's default, or a spec file's own value, applies).
  assert.equal('image_size' in buildSpec({ ...RECIPE_DEFAULTS, name: 'n', dataTrain: '/d' }).data, false);
});

test('summary: every setting on its own line, image size, freeze, AMP and weights included', () => {
  const c: WizardChoices = {
    ...RECIPE_DEFAULTS,
    name: 'shapes-resnet50',
    dataTrain: '/w/shapes',
    imageSize: 48,
    freeze: 'none',
    ampLevel: 'O0',
    lossScale: 'none',
  };
  const resolved = resolveDefaults({
    health: healthOf(CPU_DOCTOR),
    data: { images: 120, classes: 4, typicalSize: 48 },
    epochs: 10,
    devices: 1,
  });
  const lines = summaryLines({ choices: c, target: 'This machine', data: { images: 120, classes: 4 }, resolved });
  assert.deepEqual(
    lines.map((l) => l.key),
    ['data', 'imageSize', 'backbone', 'pretrained', 'freeze', 'amp', 'epochs', 'batchSize', 'lr', 'devices', 'name'],
  );
  const by = Object.fromEntries(lines.map((l) => [l.key, l]));
  assert.equal(by.data.note, '4 classes, 120 images');
  assert.equal(by.imageSize.value, '48 px');
  assert.match(by.imageSize.note ?? '', /about 48 px/);
  assert.match(by.pretrained.value, /^none/);
  assert.match(by.freeze.note ?? '', /no pretrained weights/);
  assert.match(by.amp.note ?? '', /no NPU.*no loss scaling/);
});

test('weights: None switches freeze to none, over a chosen one too; weights bring back the frozen backbone or the chosen mode', () => {
  const c: WizardChoices = { ...RECIPE_DEFAULTS, name: 'n', dataTrain: '/d' };
  const none = withPretrained(c, undefined, undefined);
  assert.equal(none.freeze, 'none');
  assert.equal(withPretrained(none, '/w/r50.ckpt', undefined).freeze, 'backbone');
  // A freeze mode the user picked (this session, or remembered per target) must not freeze random layers...
  const picked = withPretrained({ ...c, freeze: 'up_to:layer2' }, undefined, 'up_to:layer2');
  assert.equal(picked.freeze, 'none');
  // ...and comes back with weights.
  assert.equal(withPretrained(picked, '/w/r50.ckpt', 'up_to:layer2').freeze, 'up_to:layer2');
});

test('a new backbone without the chosen stage gets the freeze withPretrained would give; a fitting mode stays', () => {
  const c: WizardChoices = { ...RECIPE_DEFAULTS, name: 'n', dataTrain: '/d', freeze: 'up_to:layer3' };
  assert.equal(refitFreeze({ ...c, backbone: 'resnet18' }), undefined, 'resnet18 has layer3');
  assert.equal(
    refitFreeze({ ...c, backbone: 'convnext_tiny' as Backbone, pretrained: 'mindcv:convnext_tiny' }),
    'backbone',
  );
  assert.equal(refitFreeze({ ...c, backbone: 'convnext_tiny' as Backbone, pretrained: undefined }), 'none');
  assert.equal(refitFreeze({ ...c, backbone: 'convnext_tiny' as Backbone, freeze: 'backbone' }), undefined);
});

test('remembered choices: stored per target, read back field by field, junk dropped', () => {
  assert.equal(rememberKey('ssh:box'), 'ascend.wizard.last.ssh:box');
  const stored = JSON.parse(
    JSON.stringify(
      rememberChoices({ ...RECIPE_DEFAULTS, name: 'x', dataTrain: '/d', epochs: 3, imageSize: 48 }, false),
    ),
  );
  const r = recallChoices(stored);
  assert.equal(r.choices.dataTrain, '/d');
  assert.equal(r.choices.epochs, 3);
  assert.equal(r.choices.imageSize, 48);
  assert.equal(r.choices.pretrained, undefined);
  assert.ok(r.userSet.has('pretrained'), '"None" was a choice');
  assert.equal(r.choices.freeze, undefined, 'a freeze the wizard chose is not a user choice');
  const junk = recallChoices({ dataTrain: 5, backbone: 'vgg', epochs: -1, lr: 'fast', name: '  ' });
  assert.deepEqual(junk.choices, {});
  assert.deepEqual(recallChoices('nonsense').choices, {});
});

test('interactions: the short path with the defaults fits the budget of five, with or without a target pick', () => {
  assert.deepEqual(shortPathPrompts({ targets: 1, healthy: true }), ['palette', 'data', 'weights', 'launch']);
  assert.equal(shortPathPrompts({ targets: 3, healthy: true }).length, SHORT_PATH_BUDGET);
  const n = new InteractionCounter();
  for (const s of ['palette', 'data', 'weights', 'launch']) n.count(s);
  assert.equal(n.over(), false);
  n.count('extra');
  n.count('extra');
  assert.equal(n.over(), true);
  assert.match(n.toString(), /^6 interactions: palette → data/);
});

function png(w: number, h: number): Buffer {
  const b = Buffer.alloc(33);
  b.writeUInt32BE(0x89504e47, 0);
  b.writeUInt32BE(0x0d0a1a0a, 4);
  b.writeUInt32BE(13, 8);
  b.write('IHDR', 12, 'latin1');
  b.writeUInt32BE(w, 16);
  b.writeUInt32BE(h, 20);
  return b;
}

test('image folders: found in a workspace with class and image counts and the typical size', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'aft-imgf-'));
  try {
    for (const cls of ['circle', 'square', 'triangle'])
      for (let i = 0; i < 4; i++) {
        mkdirSync(path.join(root, 'data', 'shapes', cls), { recursive: true });
        writeFileSync(path.join(root, 'data', 'shapes', cls, `${i}.png`), png(48, 64));
      }
    mkdirSync(path.join(root, 'src', 'a'), { recursive: true });
    mkdirSync(path.join(root, 'src', 'b'), { recursive: true });
    writeFileSync(path.join(root, 'src', 'a', 'x.ts'), '');
    const found = findImageFolders(root);
    assert.equal(found.length, 1);
    assert.deepEqual(found[0], { path: path.join(root, 'data', 'shapes'), classes: 3, images: 12, typicalSize: 48 });
    assert.equal(imageFolderDescription(found[0]), '3 classes · 12 images · about 48 px');
    assert.equal(describeImageFolder(path.join(root, 'src')), undefined);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('image headers: PNG, GIF, BMP and JPEG sizes', () => {
  assert.deepEqual(headerDimensions(png(32, 20)), { width: 32, height: 20 });
  const gif = Buffer.from('GIF89a\x10\x00\x08\x00', 'latin1');
  assert.deepEqual(headerDimensions(gif), { width: 16, height: 8 });
  const bmp = Buffer.alloc(26);
  bmp.write('BM', 0, 'latin1');
  bmp.writeInt32LE(40, 18);
  bmp.writeInt32LE(-30, 22);
  assert.deepEqual(headerDimensions(bmp), { width: 40, height: 30 });
  // SOI, APP0 (length 4), SOF0 with height 100 and width 200
  const jpg = Buffer.from([
    0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0, 0, 0xff, 0xc0, 0x00, 0x11, 8, 0, 100, 0, 200, 3, 0, 0, 0, 0,
  ]);
  assert.deepEqual(headerDimensions(jpg), { width: 200, height: 100 });
  assert.equal(headerDimensions(Buffer.from('nope')), undefined);
});
