import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { PreviewCancelled, previewArgs, runPreview } from '../../../src/core/preview/client';
import { toPreviewView } from '../../../src/core/preview/model';
import { RunnerError } from '../../../src/core/targets/runnerCli';

const FAKE = path.join(__dirname, '..', 'fixtures', 'fake-preview.mjs');
const ROOT = path.join(__dirname, '..', '..', '..');
const PYTHON = path.join(ROOT, '.venv', 'bin', 'python');
const fake = (scenario: string) => ({
  python: process.execPath,
  launcher: [FAKE],
  env: { ...process.env, FAKE_PREVIEW: scenario },
});

test('argv: one element per operand; a name that looks like an option stays a name', () => {
  assert.deepEqual(previewArgs.preview('/d', { val: '/v', spec: '/s.yaml', samples: 2, maxBytes: 1000 }), [
    'preview',
    '/d',
    '--val',
    '/v',
    '--spec',
    '/s.yaml',
    '--samples',
    '2',
    '--max-bytes',
    '1000',
  ]);
  assert.deepEqual(previewArgs.preview('-data'), ['preview', './-data']);
  assert.deepEqual(previewArgs.predict('/r/c.ckpt', ['/a.jpg', '--run'], '/r'), [
    'predict',
    '--ckpt',
    '/r/c.ckpt',
    '--run',
    '/r',
    '--',
    '/a.jpg',
    '--run',
  ]);
});

test('progress lines are reported, the last line is the answer', async () => {
  const seen: number[] = [];
  const r = runPreview(fake('answer'), "/d it's", { onProgress: (p) => seen.push(p.done) });
  assert.deepEqual(await r.result, { args: ['preview', "/d it's"] });
  assert.deepEqual(seen, [0, 1000, 2000]);
});

test('cancel sends SIGINT: the runner says cancelled and the result is PreviewCancelled', async () => {
  let r: ReturnType<typeof runPreview> | undefined = undefined;
  // Cancelled once it is reading (its second progress line), as a user would after seeing progress.
  r = runPreview(fake('wait'), '/d', { onProgress: (p) => p.done === 1000 && r?.cancel() });
  await assert.rejects(r.result, PreviewCancelled);
});

test("a runner error is a RunnerError with the runner's message and fix", async () => {
  const r = runPreview(fake('fail'), '/d');
  await assert.rejects(r.result, (e: unknown) => {
    assert.ok(e instanceof RunnerError);
    assert.equal(e.message, 'need at least two class folders');
    assert.equal(e.exitCode, 2);
    assert.equal(e.info?.fix, 'put one sub-folder per class in DIR');
    return true;
  });
});

test('a Python that is not there: a RunnerError that says it could not run', async () => {
  const r = runPreview({ python: '/nonexistent/python3' }, '/d');
  await assert.rejects(r.result, /could not run \/nonexistent\/python3/);
});

test('the real runner: a demo set with a planted duplicate and a broken file, read into the view', async () => {
  const tmp = mkdtempSync(path.join(tmpdir(), 'aft-preview-'));
  try {
    const data = path.join(tmp, 'shapes');
    execFileSync(PYTHON, ['-m', 'ascend_finetune', 'make-demo-data', data, '--per-class', '5', '--size', '16'], {
      cwd: path.join(ROOT, 'runner'),
      stdio: 'pipe',
    });
    copyFileSync(path.join(data, 'red circle', '0000.png'), path.join(data, 'red circle', 'copy.png'));
    writeFileSync(path.join(data, 'green square', 'broken.jpg'), 'not an image');
    // --samples 0: no thumbnails, so the runner does not import MindSpore (a unit test stays fast).
    const r = runPreview({ python: PYTHON, runnerDir: path.join(ROOT, 'runner') }, data, { samples: 0 });
    const v = toPreviewView(await r.result);
    assert.deepEqual(
      v.classes.map((c) => [c.name, c.images]),
      [
        ['blue triangle', 5],
        ['green square', 5],
        ['red circle', 6],
        ['yellow cross', 5],
      ],
    );
    const dup = v.problems.find((p) => p.kind === 'duplicate');
    assert.ok(dup, v.problems.map((p) => p.message).join('\n'));
    assert.ok(dup.files.some((f) => /red circle\/(0000|copy)\.png$/.test(f.path)));
    const skipped = v.problems.find((p) => p.kind === 'skipped');
    assert.ok(skipped && skipped.files[0].path.endsWith('green square/broken.jpg'), JSON.stringify(skipped));
    assert.equal(v.thumbnails.shown, 0);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
