// Runner deployment over a real OpenSSH server on 127.0.0.1: the runner shipped with the extension
// is copied in one ssh call, skipped when the target's copy has the same content hash, replaced when
// it differs, and the copy is what the target then runs. The folder name is full of shell syntax.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { contentHash, deployRunner, runnerFiles } from '../../src/core/targets/deploy';
import { runRunner } from '../../src/core/targets/runnerCli';
import { makeTarget, type TargetDef } from '../../src/core/targets/model';
import { PYTHON, requirePython, RUNNER_DIR } from './realRun';
import { startSshd, type Sshd } from './sshd';

let tmp: string;
let sshd: Sshd;

before(async () => {
  requirePython();
  tmp = mkdtempSync(path.join(tmpdir(), 'aft-it-deploy-'));
  sshd = await startSshd();
});
after(async () => {
  await sshd?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

test(
  'deploy copies the runner once, re-copies on change, and the target runs the copy',
  { timeout: 120_000 },
  async () => {
    const marker = path.join(tmp, 'injected');
    const dir = path.join(tmp, `runner $(touch ${marker}) it's; v0.1.0`);
    const def: TargetDef = {
      id: 'ssh:loopback',
      kind: 'ssh',
      label: 'loopback',
      source: 'settings',
      description: '',
      runsRoot: path.join(tmp, 'runs'),
      ssh: { dest: sshd.destination, runner: { python: PYTHON, runnerDir: dir }, deploy: true },
    };
    const opts = { controlDir: sshd.controlDir };
    const files = runnerFiles(RUNNER_DIR);
    assert.ok(
      files.some((f) => f.rel === 'ascend_finetune/cli.py') && !files.some((f) => f.rel.includes('__pycache__')),
    );

    assert.equal(await deployRunner(def, files, opts), 'deployed');
    assert.equal(readFileSync(path.join(dir, '.content-hash'), 'utf8'), contentHash(files));
    assert.equal(
      readFileSync(path.join(dir, 'ascend_finetune', 'cli.py'), 'utf8'),
      readFileSync(path.join(RUNNER_DIR, 'ascend_finetune', 'cli.py'), 'utf8'),
    );
    assert.equal(await deployRunner(def, files, opts), 'current', 'same content: nothing copied');

    // A newer extension ships a changed runner: the copy is replaced whole, no stale file stays.
    assert.ok(
      files.some((f) => f.rel === 'ascend_finetune/data/demo.py'),
      'the file dropped below is shipped today',
    );
    const changed = [
      ...files.filter((f) => f.rel !== 'ascend_finetune/data/demo.py'),
      { rel: 'ascend_finetune/extra.py', text: '# new\n' },
    ];
    assert.equal(await deployRunner(def, changed, opts), 'deployed');
    assert.ok(existsSync(path.join(dir, 'ascend_finetune', 'extra.py')));
    assert.ok(!existsSync(path.join(dir, 'ascend_finetune', 'data', 'demo.py')));
    assert.deepEqual(
      readdirSync(path.dirname(dir)).filter((n) => n.startsWith('.deploy-') || n.includes('.old-')),
      [],
      'no leftovers',
    );

    // The target runs the deployed copy (PYTHONPATH is the deployed folder).
    assert.equal(await deployRunner(def, files, opts), 'deployed');
    const doctor = await runRunner<{ python: { executable: string }; mindspore: { ok: boolean } }>(
      makeTarget(def, opts),
      ['doctor'],
    );
    assert.equal(doctor.mindspore.ok, true);
    const where = await runRunner<{ file: string }>(
      makeTarget(def, {
        ...opts,
        launcher: ['-c', 'import json, ascend_finetune; print(json.dumps({"file": ascend_finetune.__file__}))'],
      }),
      [],
    );
    assert.equal(path.dirname(path.dirname(where.file)), dir);
    assert.ok(!existsSync(marker), 'the folder name ran nothing');
  },
);
