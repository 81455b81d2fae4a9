import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import { RunnerError } from '../../../src/core/targets/runnerCli';
import { localTarget } from '../../../src/core/targets/target';
import { deleteRunDir, listFolder, writeTargetFile, type PythonTargetFactory } from '../../../src/core/targets/ops';

// The helpers run in a real Python, as they do on a target.
const py: PythonTargetFactory = (launcher) => localTarget({ python: 'python3', launcher });
const nasty = 'it\'s "q" $(touch MARKER) `touch MARKER`; ü 日本';

let tmp: string;
beforeEach(() => (tmp = mkdtempSync(path.join(tmpdir(), 'aft-ops-'))));
afterEach(() => rmSync(tmp, { recursive: true, force: true }));

test('listFolder: sub-folders sorted, files only with the asked extensions, parent for "up"', async () => {
  for (const d of ['b', 'a', nasty]) mkdirSync(path.join(tmp, d));
  writeFileSync(path.join(tmp, 'w.CKPT'), '');
  writeFileSync(path.join(tmp, 'notes.txt'), '');
  const l = await listFolder(py, tmp, ['.ckpt', '.safetensors']);
  assert.equal(l.path, tmp);
  assert.equal(l.parent, path.dirname(tmp));
  assert.deepEqual(l.dirs, ['a', 'b', nasty]);
  assert.deepEqual(l.files, ['w.CKPT']);
  assert.deepEqual((await listFolder(py, path.join(tmp, nasty))).dirs, []);
  await assert.rejects(listFolder(py, path.join(tmp, 'nope')), (e: RunnerError) => e.info?.kind === 'not_a_folder');
});

test('writeTargetFile: creates folders, writes the text unchanged, runs nothing it carries', async () => {
  const file = path.join(tmp, nasty, 'spec.ascend.json');
  const text = JSON.stringify({ name: nasty }) + '\n';
  assert.equal(await writeTargetFile(py, file, text, { cwd: tmp }), file);
  assert.equal(readFileSync(file, 'utf8'), text);
  assert.ok(!existsSync(path.join(tmp, 'MARKER')));
});

test('deleteRunDir: refuses a folder that is not a run and a run whose process lives; deletes an ended one', async () => {
  const plain = path.join(tmp, 'plain');
  mkdirSync(plain);
  await assert.rejects(deleteRunDir(py, plain), (e: RunnerError) => e.info?.kind === 'not_a_run' && e.exitCode === 2);
  assert.ok(existsSync(plain));

  const live = path.join(tmp, 'live');
  mkdirSync(live);
  writeFileSync(path.join(live, 'status.json'), JSON.stringify({ state: 'running', pid: process.pid }));
  await assert.rejects(deleteRunDir(py, live), (e: RunnerError) => e.info?.kind === 'running');
  assert.ok(existsSync(live));

  const done = path.join(tmp, nasty);
  mkdirSync(path.join(done, 'checkpoints'), { recursive: true });
  writeFileSync(path.join(done, 'status.json'), JSON.stringify({ state: 'completed', pid: process.pid }));
  assert.equal(await deleteRunDir(py, done), done);
  assert.ok(!existsSync(done));
});
