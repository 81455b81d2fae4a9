import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import {
  bestEntry,
  formatBytes,
  mergeCheckpointEvents,
  newestEntry,
  parseEntry,
  parseManifest,
  unsafeFileReason,
} from '../../../src/core/checkpoints/manifest';
import { describeEntry } from '../../../src/core/checkpoints/describe';
import { readRunCheckpoints, toRunCheckpoints } from '../../../src/core/checkpoints/runInfo';
import { localTarget } from '../../../src/core/targets/target';

// Shaped like a real checkpoints.json (docs/protocol.md, section 1).
const good = (file: string, step: number, extra: object = {}) => ({
  file,
  epoch: Math.ceil(step / 3),
  step,
  metrics: { loss: 1 / step, val_loss: 2 / step, val_acc: step / 10 },
  bytes: 45_000_000 + step,
  sha256: 'ab'.repeat(32),
  created_at: 1796204885 + step,
  best: false,
  ...extra,
});

test('a clean manifest: entries in saving order, fields normalized, one best', () => {
  const text = JSON.stringify([
    good('checkpoints/it-e1-s3.ckpt', 3),
    good('checkpoints/it-e2-s6.ckpt', 6, { best: true }),
  ]);
  const m = parseManifest(text);
  assert.deepEqual(m.problems, []);
  assert.deepEqual(
    m.entries.map((e) => [e.file, e.epoch, e.step, e.valAcc, e.best, e.order]),
    [
      ['checkpoints/it-e1-s3.ckpt', 1, 3, 0.3, false, 0],
      ['checkpoints/it-e2-s6.ckpt', 2, 6, 0.6, true, 1],
    ],
  );
  assert.equal(bestEntry(m.entries)?.file, 'checkpoints/it-e2-s6.ckpt');
  assert.equal(newestEntry(m.entries)?.step, 6);
});

test('an EMA checkpoint (train.ema) keeps its kind; the run weights have none', () => {
  const m = parseManifest(
    JSON.stringify([
      good('checkpoints/it-e1-s3.ckpt', 3),
      good('checkpoints/it-e1-s3-ema.ckpt', 3, { kind: 'ema', best: true }),
      good('checkpoints/it-e2-s6-ema.ckpt', 6, { kind: 7 }),
    ]),
  );
  assert.deepEqual(
    m.entries.map((e) => [e.file, e.kind, e.best]),
    [
      ['checkpoints/it-e1-s3.ckpt', undefined, false],
      ['checkpoints/it-e1-s3-ema.ckpt', 'ema', true],
      ['checkpoints/it-e2-s6-ema.ckpt', undefined, false],
    ],
  );
});

test('junk entries become problems with a reason; the good ones are still listed; nothing throws', () => {
  const text = JSON.stringify([
    42,
    null,
    'checkpoints/x.ckpt',
    { epoch: 1 },
    { file: '/etc/passwd' },
    { file: 'checkpoints/../../home/u/.ssh/id_rsa' },
    { file: '' },
    good('checkpoints/ok-e1-s3.ckpt', 3),
    { file: 'checkpoints/partial.ckpt', metrics: 'nope', bytes: -5, sha256: 'xyz', epoch: 1.5, step: '7', best: 'yes' },
  ]);
  const m = parseManifest(text);
  assert.deepEqual(
    m.problems.map((p) => [p.index, p.message]),
    [
      [0, 'not an object'],
      [1, 'not an object'],
      [2, 'not an object'],
      [3, 'no "file" string'],
      [4, 'absolute path (must be relative to the run directory)'],
      [5, "path leaves the run directory ('..')"],
      [6, 'empty file name'],
    ],
  );
  assert.deepEqual(
    m.entries.map((e) => e.file),
    ['checkpoints/ok-e1-s3.ckpt', 'checkpoints/partial.ckpt'],
  );
  const partial = m.entries[1];
  assert.deepEqual(
    [partial.epoch, partial.step, partial.bytes, partial.sha256, partial.loss, partial.best],
    [null, null, null, null, null, false],
  );
  assert.match(describeEntry(partial, 0), /\?/); // unknown size shown as such
});

test('a file that is not JSON, or not an array, is one whole-file problem; no file is no problem', () => {
  assert.deepEqual(
    parseManifest('{"torn": ').problems.map((p) => p.index),
    [-1],
  );
  assert.match(parseManifest('{"a": 1}').problems[0].message, /not a JSON array/);
  assert.deepEqual(parseManifest(undefined), { entries: [], problems: [] });
  // NaN written by a foreign tool is not JSON either
  assert.equal(parseManifest('[{"file": "c.ckpt", "metrics": {"loss": NaN}}]').problems.length, 1);
});

test('a re-saved name keeps its last entry; at most one best survives', () => {
  const text = JSON.stringify([
    good('checkpoints/a.ckpt', 3, { best: true }),
    good('checkpoints/b.ckpt', 6, { best: true }),
    good('checkpoints/a.ckpt', 9),
  ]);
  const m = parseManifest(text);
  assert.deepEqual(
    m.entries.map((e) => [e.file, e.step, e.best]),
    [
      ['checkpoints/b.ckpt', 6, true],
      ['checkpoints/a.ckpt', 9, false],
    ],
  );
});

test('checkpoint events fill what an entry lacks, only for the same step', () => {
  const m = parseManifest(
    JSON.stringify([
      { file: 'checkpoints/a.ckpt', step: 3 },
      { file: 'checkpoints/b.ckpt', step: 6 },
    ]),
  );
  const events = [
    { v: 1, seq: 5, type: 'step', step: 3 },
    { v: 1, seq: 6, type: 'checkpoint', ...good('checkpoints/a.ckpt', 3) },
    { v: 1, seq: 9, type: 'checkpoint', ...good('checkpoints/b.ckpt', 5) }, // an older save of that name
    'junk',
  ];
  const merged = mergeCheckpointEvents(m, events, true);
  assert.equal(merged.entries[0].valAcc, 0.3);
  assert.equal(merged.entries[0].sha256, 'ab'.repeat(32));
  assert.equal(merged.entries[1].valAcc, null, 'an event of another step is not this file');
});

test('without a readable manifest the events stand in, with best recomputed (ties to the later step)', () => {
  const events = [
    { type: 'checkpoint', ...good('checkpoints/a.ckpt', 3, { metrics: { val_acc: 0.5 }, best: true }) },
    { type: 'checkpoint', ...good('checkpoints/b.ckpt', 6, { metrics: { val_acc: 0.5 } }) },
    { type: 'checkpoint', ...good('checkpoints/c.ckpt', 7, { metrics: { loss: 1, reason: 'stopped' } }) },
  ];
  const merged = mergeCheckpointEvents(parseManifest('garbage'), events, false);
  assert.deepEqual(
    merged.entries.map((e) => [e.file, e.best, e.source]),
    [
      ['checkpoints/a.ckpt', false, 'events'],
      ['checkpoints/b.ckpt', true, 'events'],
      ['checkpoints/c.ckpt', false, 'events'],
    ],
  );
  assert.equal(merged.problems.length, 1, 'the unreadable manifest is still reported');
});

test('run info: exports and kept eval results attach to their checkpoint; unlisted files are reported', () => {
  const out = {
    run_dir: '/runs/r1',
    manifest: JSON.stringify([
      good('checkpoints/it-e1-s3.ckpt', 3),
      good('checkpoints/it-e2-s6.ckpt', 6, { best: true }),
    ]),
    events: [],
    spec: {
      name: 'it',
      model: { backbone: 'resnet18', pretrained: '/w/r18.ckpt', freeze: 'backbone' },
      data: { train: '/d', val: null, image_size: 32 },
    },
    classes: ['a', 'b'],
    files: [
      { name: 'it-e1-s3.ckpt', bytes: 10 },
      { name: 'it-e2-s6.ckpt', bytes: 10 },
      { name: 'it-e2-s6.onnx', bytes: 7 },
      { name: 'it-e2-s6.ckpt.eval.json', bytes: 100 },
      { name: 'stray-e9-s99.ckpt', bytes: 3 },
    ],
    evals: {
      'it-e2-s6.ckpt.eval.json': {
        ckpt: '/runs/r1/checkpoints/it-e2-s6.ckpt',
        data: '/d',
        num_images: 8,
        accuracy: 0.75,
        loss: 0.5,
        classes: ['a', 'b'],
        per_class: [],
        confusion: [
          [3, 1],
          [1, 3],
        ],
        skipped: [],
        evaluated_at: 1,
      },
    },
  };
  const r = toRunCheckpoints(out);
  assert.equal(r.pretrained, '/w/r18.ckpt');
  assert.equal(r.freeze, 'backbone');
  assert.deepEqual(r.classes, ['a', 'b']);
  const [a, b] = r.checkpoints;
  assert.deepEqual(a.exports, []);
  assert.deepEqual(b.exports, [{ file: 'checkpoints/it-e2-s6.onnx', format: 'onnx', bytes: 7 }]);
  assert.equal(b.lastEval?.accuracy, 0.75);
  assert.deepEqual(r.unlisted, ['checkpoints/stray-e9-s99.ckpt']);
  // And a helper output that is itself junk gives an empty model, not an exception.
  assert.deepEqual(toRunCheckpoints('nonsense').checkpoints, []);
});

test('unsafe names and sizes', () => {
  assert.equal(unsafeFileReason('checkpoints/a b.ckpt'), undefined);
  assert.ok(unsafeFileReason('C:\\x.ckpt'));
  assert.equal(formatBytes(89_476_862), '89.5 MB');
  assert.equal(formatBytes(512), '512 B');
});

// The run-reading helper itself, in a real Python (as on a target), on run folders written here.
test('the helper on disk: gaps in the manifest filled from events.jsonl; an unreadable manifest falls back to them', async () => {
  const py = (launcher: readonly string[]) => localTarget({ python: 'python3', launcher });
  const dir = mkdtempSync(path.join(tmpdir(), "aft-runinfo it's "));
  try {
    mkdirSync(path.join(dir, 'checkpoints'));
    for (const f of ['a.ckpt', 'b.ckpt']) writeFileSync(path.join(dir, 'checkpoints', f), 'x');
    const ev = (seq: number, extra: object) =>
      JSON.stringify({ v: 1, seq, t: seq, type: 'checkpoint', ...extra }) + '\n';
    writeFileSync(
      path.join(dir, 'events.jsonl'),
      ev(1, good('checkpoints/a.ckpt', 3)) +
        '{"torn\n' +
        ev(3, good('checkpoints/b.ckpt', 6)) +
        '{"v": 1, "seq": 4, "type": "checkp',
    );
    writeFileSync(
      path.join(dir, 'checkpoints.json'),
      JSON.stringify([{ file: 'checkpoints/a.ckpt', step: 3 }, good('checkpoints/b.ckpt', 6, { best: true })]),
    );
    const r = await readRunCheckpoints(py, dir);
    assert.deepEqual(
      r.checkpoints.map((c) => [c.file, c.valAcc, c.best]),
      [
        ['checkpoints/a.ckpt', 0.3, false],
        ['checkpoints/b.ckpt', 0.6, true],
      ],
    );

    writeFileSync(path.join(dir, 'checkpoints.json'), '[{"file": "checkpoints/a.ck');
    const torn = await readRunCheckpoints(py, dir);
    assert.deepEqual(
      torn.checkpoints.map((c) => [c.file, c.source]),
      [
        ['checkpoints/a.ckpt', 'events'],
        ['checkpoints/b.ckpt', 'events'],
      ],
    );
    assert.equal(torn.problems.length, 1);
    await assert.rejects(readRunCheckpoints(py, path.join(dir, 'nope')), /no such run directory/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an entry carries where its weights came from and its preprocessing; bad values are dropped', () => {
  const sha = 'AB'.repeat(32);
  const e = parseEntry(
    {
      file: 'checkpoints/a.ckpt',
      weights: { source: 'mindcv:resnet18', file: '/c/w.ckpt', origin: 'mindcv', sha256: sha },
      preprocess: { name: 'mindcv', crop_pct: 0.875 },
    },
    0,
    'manifest',
  );
  assert.ok('file' in e);
  assert.deepEqual(
    [e.weights, e.preprocess],
    [{ source: 'mindcv:resnet18', sha256: sha.toLowerCase(), firstSource: null }, 'mindcv'],
  );
  const bad = parseEntry({ file: 'checkpoints/b.ckpt', weights: { sha256: 'x' }, preprocess: 'timm' }, 1, 'manifest');
  assert.ok('file' in bad);
  assert.deepEqual([bad.weights, bad.preprocess], [null, null], 'an old or odd manifest shows nothing');
  const noSha = parseEntry({ file: 'c.ckpt', weights: { source: '/w/r.ckpt', sha256: 'zz' } }, 2, 'manifest');
  assert.ok('file' in noSha);
  assert.deepEqual(noSha.weights, { source: '/w/r.ckpt', sha256: null, firstSource: null });
});
