import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { parseSpecText } from '../../src/core/spec/file';
import { checkSpec, specDefaults, type SpecProblem } from '../../src/core/spec/schema';
import { parseSpecDocument } from '../../src/server/specDocument';
import { EXAMPLES, EXAMPLES_DIR, expectedOf } from '../spec-examples/expected';

// The shared examples through the extension's validation (ajv, the runner's schema file); the
// runner's own test (test/runner/test_spec_examples.py) holds them to the same expected problems.

const DIR = EXAMPLES_DIR;

const key = (p: SpecProblem) => JSON.stringify([p.path, p.message, p.fix]);

test('there are valid and invalid examples, JSON and YAML', () => {
  assert.ok(EXAMPLES.some((f) => f.endsWith('.json')) && EXAMPLES.some((f) => f.endsWith('.yaml')));
  assert.ok(EXAMPLES.filter((f) => expectedOf(f).length === 0).length >= 2);
  assert.ok(EXAMPLES.filter((f) => expectedOf(f).length > 0).length >= 5);
});

for (const file of EXAMPLES) {
  test(`${file}: exactly its expected problems`, () => {
    const text = readFileSync(path.join(DIR, file), 'utf8');
    const doc = parseSpecDocument(text, file);
    assert.deepEqual(doc.errors, [], 'no syntax errors');
    // The positional reader gives the same object as the converter that runs before a launch.
    assert.deepEqual(doc.value, parseSpecText(text, file));
    const got = checkSpec(doc.value, { floatPaths: doc.floatPaths, baseDir: DIR, checkFiles: true });
    assert.deepEqual(got.map(key).sort(), expectedOf(file).map(key).sort());
  });
}

test('the defaults are the reference recipe, read from the schema', () => {
  const d = specDefaults() as Record<string, Record<string, unknown>>;
  assert.deepEqual(d.model, {
    backbone: 'resnet50',
    pretrained: null,
    preprocess: 'auto',
    freeze: 'backbone',
    num_classes: null,
    head_norm: 'auto',
    unfreeze: [],
  });
  assert.equal(d.amp.level, 'O2');
  assert.equal(d.amp.loss_scale, 'dynamic');
  assert.equal(d.train.optimizer, 'momentum');
  assert.equal(d.data.batch_size, 32);
  assert.equal(d.checkpoint.keep_max, 5);
});

test('without the source text a float cannot be told from an integer; with it, it can', () => {
  const spec = { data: { train: 'x', workers: 2 } };
  assert.deepEqual(checkSpec(spec), []);
  assert.deepEqual(
    checkSpec(spec, { floatPaths: new Set(['data.workers']) }).map((p) => p.message),
    ['must be an integer, got 2.0'],
  );
});
