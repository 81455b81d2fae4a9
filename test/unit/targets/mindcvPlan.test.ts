// Install mindcv on Target's plan: the carried wheels are the pinned bytes (a changed one is
// refused), the probe runs on a real Python, and every argv (pip install, the target's own pip,
// pip download for the target's tags, the by-hand lines) reaches the program unchanged through
// the ssh layer's quoting under sh, fish and tcsh, paths with spaces and quotes included.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { sshArgv } from '../../../src/core/ssh/ssh';
import { translator } from '../../../src/shared/l10n';
import {
  CARRIED_WHEELS,
  downloadPlatforms,
  manualCommands,
  MindcvInstallError,
  parseProbe,
  pipDownloadArgv,
  pipInstallArgv,
  pipOnlineArgv,
  PROBE,
  verifyCarriedWheels,
  wheelRequirement,
  type TargetPython,
} from '../../../src/core/targets/mindcvPlan';
import { doctorRows } from '../../../src/core/targets/model';
import { remoteSetup } from '../../../src/core/targets/target';
import { fixCommand, mindcvMissingFor } from '../../../src/core/wizard/health';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const WHEELS = path.join(ROOT, 'runner', 'wheels');
const PYTHON = path.join(ROOT, '.venv', 'bin', 'python');
const tmp = mkdtempSync(path.join(tmpdir(), 'aft-mindcv-plan-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const aarch64: TargetPython = {
  executable: '/opt/py/bin/python3',
  version: '3.9',
  implementation: 'cp',
  abi: 'cp39',
  platforms: [
    'manylinux_2_35_aarch64',
    'manylinux_2_28_aarch64',
    'manylinux_2_17_aarch64',
    'manylinux2014_aarch64',
    'linux_aarch64',
  ],
  pip: '23.0',
  pyyaml: null,
};

test('the carried wheels are the pinned bytes, and a changed or missing one is refused', async () => {
  const files = await verifyCarriedWheels(WHEELS);
  assert.deepEqual(
    files.map((f) => path.basename(f)),
    ['mindcv-0.3.0-py3-none-any.whl', 'tqdm-4.70.1-py3-none-any.whl'],
  );
  assert.match(readFileSync(path.join(ROOT, 'runner', 'requirements.txt'), 'utf8'), /^mindcv==0\.3\.0$/m);
  assert.match(readFileSync(path.join(ROOT, 'runner', 'requirements.txt'), 'utf8'), /^tqdm==4\.70\.1$/m);

  const tampered = path.join(tmp, 'tampered');
  mkdirSync(tampered);
  for (const w of CARRIED_WHEELS) copyFileSync(path.join(WHEELS, w.file), path.join(tampered, w.file));
  const victim = path.join(tampered, CARRIED_WHEELS[0].file);
  const body = readFileSync(victim);
  body[body.length >> 1] ^= 0xff;
  writeFileSync(victim, body);
  await assert.rejects(verifyCarriedWheels(tampered), (e: Error) => {
    assert.ok(e instanceof MindcvInstallError);
    assert.match(e.message, /mindcv-0\.3\.0-py3-none-any\.whl has sha256 [0-9a-f]{64}, not the pinned 18152d72/);
    return true;
  });
  rmSync(victim);
  await assert.rejects(verifyCarriedWheels(tampered), /cannot be read/);
});

test('the probe, run by a real Python, gives its version, abi, platform tags, pip and PyYAML', () => {
  if (!existsSync(PYTHON)) return assert.fail(`${PYTHON} is missing: run bash scripts/setup-python.sh`);
  const t = parseProbe(execFileSync(PYTHON, ['-c', PROBE], { encoding: 'utf8' }));
  assert.equal(t.version, '3.11');
  assert.equal(t.abi, 'cp311');
  assert.equal(t.implementation, 'cp');
  assert.ok(t.platforms.includes(`linux_${process.arch === 'arm64' ? 'aarch64' : 'x86_64'}`), t.platforms.join());
  assert.ok(t.platforms.some((p) => p.startsWith('manylinux2014_')));
  assert.match(t.pip ?? '', /^\d+\./);
  assert.equal(t.pyyaml, '6.0.4'); // the project's venv has it (runner/requirements.txt)
  assert.throws(() => parseProbe('Traceback...\nNameError: x'), MindcvInstallError);
});

test("pip download asks for PyYAML's wheel for the target's tags, not this machine's", () => {
  assert.deepEqual(downloadPlatforms(aarch64.platforms), [
    'manylinux_2_28_aarch64',
    'manylinux_2_17_aarch64',
    'manylinux2014_aarch64',
  ]);
  assert.deepEqual(downloadPlatforms(['macosx_11_0_arm64']), ['macosx_11_0_arm64']);
  assert.deepEqual(pipDownloadArgv('/usr/bin/python3', aarch64, '/tmp/d'), [
    '/usr/bin/python3',
    '-m',
    'pip',
    '--disable-pip-version-check',
    'download',
    '--no-deps',
    '--only-binary=:all:',
    '--platform',
    'manylinux_2_28_aarch64',
    '--platform',
    'manylinux_2_17_aarch64',
    '--platform',
    'manylinux2014_aarch64',
    '--python-version',
    '3.9',
    '--implementation',
    'cp',
    '--abi',
    'cp39',
    '--dest',
    '/tmp/d',
    'pyyaml>=6.0,<7',
  ]);
  assert.deepEqual(pipOnlineArgv('py').slice(-1), ['pyyaml>=6.0,<7']);
  const install = pipInstallArgv('py', ['/a b', "/c'd"], ['mindcv==0.3.0', 'tqdm==4.70.1']);
  assert.deepEqual(install.slice(5), [
    '--no-index',
    '--find-links',
    '/a b',
    '--find-links',
    "/c'd",
    'mindcv==0.3.0',
    'tqdm==4.70.1',
  ]);
});

test('PyYAML for a CPython 3.9 aarch64 box: a range pip resolves to the newest release with a wheel for those tags', () => {
  // 6.0.4 published no cp39 aarch64 wheel: a pin to it made `pip download` fail for this (recorded) box.
  const argv = pipDownloadArgv('python3', aarch64, '/d');
  const req = argv.at(-1)!;
  assert.match(req, /^pyyaml>=6\.0,<7$/);
  for (const v of ['6.0', '6.0.1', '6.0.2', '6.0.3', '6.0.4']) assert.ok(inRange(req, v), v);
  for (const v of ['5.4.1', '7.0']) assert.ok(!inRange(req, v), v);
  // The install then takes exactly the release that was downloaded (no index there).
  assert.equal(
    wheelRequirement(
      '/tmp/x/pyyaml-6.0.3-cp39-cp39-manylinux2014_aarch64.manylinux_2_17_aarch64.manylinux_2_28_aarch64.whl',
    ),
    'pyyaml==6.0.3',
  );
  assert.equal(wheelRequirement('PyYAML-5.4.1-cp39-cp39-manylinux2014_aarch64.whl'), 'pyyaml==5.4.1');
});

/** Whether release `v` satisfies a `>=a,<b` requirement (numeric comparison, part by part). */
function inRange(req: string, v: string): boolean {
  const m = /^pyyaml>=([\d.]+),<([\d.]+)$/.exec(req)!;
  const cmp = (a: string, b: string) => {
    const x = a.split('.').map(Number);
    const y = b.split('.').map(Number);
    for (let i = 0; i < Math.max(x.length, y.length); i++)
      if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
    return 0;
  };
  return cmp(v, m[1]) >= 0 && cmp(v, m[2]) < 0;
}

/** A stand-in for the target's Python at a hostile path: prints the argv it got (node, so no shell reads it). */
function fakePython(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'python');
  writeFileSync(file, `#!${process.execPath}\nconsole.log(JSON.stringify(process.argv.slice(2)))\n`);
  chmodSync(file, 0o755);
  return file;
}

for (const shell of ['/bin/sh', '/usr/bin/fish', '/bin/tcsh']) {
  test(`through the ssh layer under ${shell}, the install argv arrives unchanged and runs nothing`, (t) => {
    if (!existsSync(shell)) return t.skip(`${shell} is not installed`);
    const cwd = mkdtempSync(path.join(tmp, 'cwd-'));
    const python = fakePython(path.join(tmp, `venv "t" it's $(touch PLANTED1) !x`, 'bin'));
    const dir = path.join(tmp, `wheels dir 'q' "dq" ; touch PLANTED2 #`);
    const argv = pipInstallArgv(python, [dir], ['mindcv==0.3.0', 'tqdm==4.70.1']);
    const line = sshArgv({ host: 'h' }, argv, { setup: remoteSetup({ python }) }).at(-1)!;
    const r = spawnSync(shell, ['-c', line], { cwd, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: cwd } });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), argv.slice(1));
    assert.ok(!existsSync(path.join(cwd, 'PLANTED1')) && !existsSync(path.join(cwd, 'PLANTED2')));
  });
}

test('the by-hand commands: download here, copy, install with --no-index there; each quoted once', () => {
  const lines = manualCommands("/opt/my py/bin/python'3", aarch64, {
    ssh: 'npu-box',
    wheelsDir: '/ext dir/runner/wheels',
    remoteDir: '.ascend-finetune/wheels',
  });
  assert.equal(lines.length, 4, lines.join('\n'));
  assert.match(
    lines[0],
    /^\(on a machine with internet\) python3 -m pip .*download .*--platform manylinux2014_aarch64 .*--abi cp39 .*'pyyaml>=6\.0,<7'$/,
  );
  assert.equal(lines[1], 'ssh npu-box mkdir -p .ascend-finetune/wheels');
  assert.equal(
    lines[2],
    "scp '/ext dir/runner/wheels/mindcv-0.3.0-py3-none-any.whl' '/ext dir/runner/wheels/tqdm-4.70.1-py3-none-any.whl' pyyaml-wheel/*.whl npu-box:.ascend-finetune/wheels/",
  );
  // The install line, run by a POSIX shell, gives pip exactly these arguments.
  const cwd = mkdtempSync(path.join(tmp, 'cwd-'));
  const python = fakePython(path.join(cwd, "my py 'q'"));
  const local = manualCommands(python, aarch64, { wheelsDir: '/ext dir/wheels', remoteDir: 'unused' });
  const r = spawnSync('/bin/sh', ['-c', local.at(-1)!], { cwd, encoding: 'utf8' });
  assert.deepEqual(JSON.parse(r.stdout), [
    ...['-m', 'pip', '--disable-pip-version-check', 'install', '--no-index'],
    ...['--find-links', '/ext dir/wheels', '--find-links', 'pyyaml-wheel'],
    ...['mindcv==0.3.0', 'tqdm==4.70.1', 'pyyaml>=6.0,<7'],
  ]);
  // PyYAML already there: no download line, nothing about PyYAML.
  const have = manualCommands(
    'python3',
    { ...aarch64, pyyaml: '5.4.1' },
    { ssh: 'b', wheelsDir: '/w', remoteDir: 'r' },
  );
  assert.ok(!have.join('\n').includes('pyyaml'), have.join('\n'));
  // The notes before a command are the user's language (the modal shows them); the commands are not.
  const zh = translator(JSON.parse(readFileSync(path.join(__dirname, '../../../l10n/bundle.l10n.zh-cn.json'), 'utf8')));
  const inZh = manualCommands('python3', aarch64, { ssh: 'npu-box', wheelsDir: '/w', remoteDir: 'r' }, zh);
  assert.match(inZh[0], /^（在能联网的机器上） python3 -m pip .*download /);
  assert.match(inZh.at(-1)!, /^（在 npu-box 上） python3 -m pip --disable-pip-version-check install --no-index /);
});

test('doctor without mindcv: a mindcv row that is a hint (not a problem) whose click installs it', () => {
  const doctor = {
    python: { version: '3.11.7', executable: '/v/bin/python', ok: true },
    mindspore: { ok: true, version: '2.10.0', backends: { CPU: true } },
    mindcv: { ok: false, version: null, packages: { mindcv: null, pyyaml: '6.0.4', tqdm: null } },
  };
  const row = doctorRows(doctor).find((r) => r.label === 'mindcv');
  assert.deepEqual(
    { ...row, fix: undefined },
    {
      label: 'mindcv',
      description: 'mindcv missing, tqdm missing (only mindcv backbones need it)',
      problem: false,
      suggest: true,
      fix: undefined,
    },
  );
  assert.equal(fixCommand(row!, 'ssh', 'ssh:box').command, 'ascend.installMindcv');
  assert.deepEqual(fixCommand(row!, 'local', 'local').args, [{ targetId: 'local' }]);
  const ok = {
    ...doctor,
    mindcv: { ok: true, version: '0.3.0', packages: { mindcv: '0.3.0', pyyaml: '6.0.4', tqdm: '4.70.1' } },
  };
  assert.deepEqual(
    doctorRows(ok).find((r) => r.label === 'mindcv'),
    { label: 'mindcv', description: '0.3.0 (for mindcv backbones)', problem: false },
  );
  // The wizard's offer: a mindcv backbone, and a doctor that says mindcv is not usable.
  assert.equal(mindcvMissingFor('efficientnet_b0', doctor), true);
  assert.equal(mindcvMissingFor('resnet50', doctor), false);
  assert.equal(mindcvMissingFor('efficientnet_b0', ok), false);
  assert.equal(mindcvMissingFor('efficientnet_b0', { python: {} }), false, 'an older doctor says nothing');
});
