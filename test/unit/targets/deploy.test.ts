import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import { contentHash, deployRunner, runnerFiles } from '../../../src/core/targets/deploy';
import { buildTargets } from '../../../src/core/targets/model';

// A fake `ssh` that runs the command string here with `sh -c` (stdin passed through).
const FAKE_SSH = path.join(__dirname, '..', 'fixtures', 'fake-ssh.mjs');
chmodSync(FAKE_SSH, 0o755);
const RUNNER = path.join(__dirname, '..', '..', '..', 'runner');

let tmp: string;
beforeEach(() => (tmp = mkdtempSync(path.join(tmpdir(), 'aft-deploy-'))));
afterEach(() => rmSync(tmp, { recursive: true, force: true }));

const targets = (deployRunnerDir: string, runnerDir?: string) =>
  buildTargets({
    localRunner: { python: 'python3' },
    localRunsRoot: '/r',
    hostname: 'h',
    sshConfigHosts: [],
    sshSettings: [{ host: 'box' }, { host: 'own', runnerDir: '/opt/runner' }],
    remoteDefaults: { python: 'python3', runsRoot: 'runs', deployRunnerDir, runnerDir },
  });

test('a host without its own runner folder gets the deployed one; one with a folder does not', () => {
  const [, box, own] = targets('.ascend-finetune/runner/0.1.0');
  assert.equal(box.ssh?.deploy, true);
  assert.equal(box.ssh?.runner.runnerDir, '.ascend-finetune/runner/0.1.0');
  assert.equal(own.ssh?.deploy, false);
  assert.equal(own.ssh?.runner.runnerDir, '/opt/runner');
  assert.equal(targets('x', '/shared/runner')[1].ssh?.deploy, false, 'remote.runnerDir set: nothing to copy');
});

test('the runner files: the package .py files and pyproject, no caches; the hash follows the content', () => {
  const files = runnerFiles(RUNNER);
  const rels = files.map((f) => f.rel);
  assert.ok(rels.includes('pyproject.toml'));
  assert.ok(rels.includes('ascend_finetune/cli.py'));
  assert.ok(
    rels.every(
      (r) =>
        r === 'pyproject.toml' ||
        r === 'requirements.txt' ||
        (r.startsWith('ascend_finetune/') && r.endsWith('.py')) ||
        r === 'ascend_finetune/spec.schema.json' ||
        r === 'ascend_finetune/weights_catalog.json' ||
        r === 'ascend_finetune/backbones.json' ||
        r === 'ascend_finetune/sweep.schema.json',
    ),
    rels.filter((r) => !r.endsWith('.py')).join(', '),
  );
  assert.ok(rels.includes('ascend_finetune/backbones.json'), 'mindcv backbones and their stages on the target');
  assert.ok(rels.includes('ascend_finetune/sweep.schema.json'), 'sweeps validate on the target');
  assert.ok(rels.includes('ascend_finetune/spec.schema.json'), 'the runner validates with the schema');
  assert.ok(rels.includes('ascend_finetune/weights_catalog.json'), 'mindcv: names resolve on the target');
  assert.ok(!rels.some((r) => r.includes('__pycache__')));
  const h = contentHash(files);
  assert.equal(contentHash(files), h);
  assert.notEqual(contentHash([...files.slice(1), { ...files[0], text: files[0].text + ' ' }]), h);
});

test('deploy over ssh: copied once, skipped while current, replaced when it changes; odd paths arrive unchanged', async () => {
  const dir = path.join(tmp, "home $(touch MARKER) it's", 'runner', '0.1.0');
  const [, box] = targets(dir);
  const files = runnerFiles(RUNNER);
  const opts = { sshPath: FAKE_SSH, timeoutMs: 30_000 };
  assert.equal(await deployRunner(box, files, opts), 'deployed');
  assert.equal(
    readFileSync(path.join(dir, 'ascend_finetune', 'cli.py'), 'utf8'),
    files.find((f) => f.rel === 'ascend_finetune/cli.py')?.text,
  );
  assert.equal(readFileSync(path.join(dir, '.content-hash'), 'utf8'), contentHash(files));
  assert.equal(await deployRunner(box, files, opts), 'current');
  const changed = files.map((f) => (f.rel === 'ascend_finetune/cli.py' ? { ...f, text: f.text + '\n# changed\n' } : f));
  assert.equal(await deployRunner(box, changed, opts), 'deployed');
  assert.match(readFileSync(path.join(dir, 'ascend_finetune', 'cli.py'), 'utf8'), /# changed\n$/);
  assert.deepEqual(readdirSync(path.dirname(dir)), ['0.1.0'], 'no temporary or old folders left');
  assert.ok(!existsSync(path.join(tmp, 'MARKER')) && !existsSync('MARKER'));
  await assert.rejects(deployRunner(box, [{ rel: '../escape.py', text: '' }], opts), /exit 2/);
});
