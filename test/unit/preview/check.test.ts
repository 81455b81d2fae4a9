import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { DataCheckCache, dataCheckOf, type DataCheck } from '../../../src/core/preview/check';
import { answeredFiles } from '../../../src/core/preview/images';
import { dataCheckLines } from '../../../src/core/wizard/summary';

// Real `preview --samples 0` style answers of the runner: shapes.json has a planted duplicate, a
// broken file and tiny classes; shapes-clean.json is the demo shapes at 30 per class (nothing wrong).
const FIX = path.join(__dirname, '..', 'fixtures', 'preview');
const load = (f: string) => JSON.parse(readFileSync(path.join(FIX, f), 'utf8')) as unknown;
const texts = (c: DataCheck) => dataCheckLines(c).map((l) => [l.text, l.warn]);

test('summary data check of a clean folder: the counts line and "no problems found"', () => {
  assert.deepEqual(texts(dataCheckOf(load('shapes-clean.json'))), [
    ['Data check: 4 classes, 108 train / 12 val images, imbalance 1×', false],
    ['Problems: no problems found', false],
  ]);
});

test('summary data check of a folder with problems: each one named on the problems line, marked', () => {
  const [counts, problems] = dataCheckLines(dataCheckOf(load('shapes.json')));
  assert.equal(counts.text, 'Data check: 4 classes, 21 train / 4 val images, imbalance 1.2×');
  assert.equal(problems.warn, true);
  assert.match(problems.text, /^Problems: /);
  assert.match(problems.text, /exact duplicate/);
  assert.match(problems.text, /skipped by the scan/);
  assert.match(problems.text, /fewer than 20 training images/);
});

test('summary data check while running and after a failure', () => {
  assert.deepEqual(texts({ state: 'checking' }), [
    ['Data check: checking…', false],
    ['Problems: checking…', false],
  ]);
  assert.deepEqual(texts({ state: 'failed', message: 'data.train: /x is not a folder' }), [
    ['Data check: could not read the folder', true],
    ['Problems: data.train: /x is not a folder', true],
  ]);
  assert.equal(dataCheckOf({ train: 1 }).state, 'failed');
});

test('the data check runs once per folder, and a failed one is tried again next time', async () => {
  const cache = new DataCheckCache();
  let runs = 0;
  const run = () => {
    runs++;
    return Promise.resolve(load('shapes-clean.json'));
  };
  const a = cache.check('local\0/data', run);
  assert.equal(a.now.state, 'checking');
  const b = cache.check('local\0/data', run);
  assert.equal((await a.done).state, 'done');
  assert.equal((await b.done).state, 'done');
  assert.equal(cache.check('local\0/data', run).now.state, 'done');
  assert.equal(runs, 1);

  let fails = 0;
  const bad = () => {
    fails++;
    return Promise.reject(new Error('ssh: connect to host box port 22: Connection refused'));
  };
  const f = await cache.check('box\0/data', bad).done;
  assert.deepEqual(f, { state: 'failed', message: 'ssh: connect to host box port 22: Connection refused' });
  const again = cache.check('box\0/data', bad);
  assert.equal(again.now.state, 'checking');
  assert.equal((await again.done).state, 'failed');
  assert.equal(fails, 2);
});

test('Classify fetches thumbnails only for the files predict answered (not the ones with an error)', () => {
  assert.deepEqual(
    answeredFiles({
      predictions: [
        { file: '/d/red circle/0003.png', top: [{ class: 'red circle', prob: 1 }] },
        { file: '/d/not an image.jpg', error: { kind: 'not_an_image', message: 'x' } },
        { file: 7 },
      ],
    }),
    ['/d/red circle/0003.png'],
  );
  assert.deepEqual(answeredFiles({ error: { kind: 'bad_input' } }), []);
});
