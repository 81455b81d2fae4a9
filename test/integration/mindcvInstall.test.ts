// Install mindcv on Target over a real OpenSSH server on 127.0.0.1, to a target whose Python is a
// fresh venv without mindcv (numpy, which MindSpore brings on a real box, and pip are the project
// venv's own, put on its path by a .pth file). pip can reach no index: its index URL is a closed 127.0.0.1 port,
// here and on the target. Without PyYAML every route fails and the error names the by-hand commands;
// with PyYAML the carried wheels are copied (into a folder full of shell syntax), installed with
// --no-index, and doctor then reports mindcv 0.3.0. A tampered carried wheel never leaves this machine.
// On this machine pip reads the carried folder itself, and a cancel stops the install.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { installMindcv, putWheels, type InstallStep } from '../../src/core/targets/mindcvInstall';
import { CARRIED_WHEELS, MindcvInstallError } from '../../src/core/targets/mindcvPlan';
import { doctorRows, makeTarget, type TargetDef } from '../../src/core/targets/model';
import { runRunner } from '../../src/core/targets/runnerCli';
import { sha256File } from '../../src/core/targets/weightsCopy';
import { freePort } from '../support/net';
import { PYTHON, requirePython, ROOT, RUNNER_DIR } from './realRun';
import { startSshd, type Sshd } from './sshd';

const WHEELS = path.join(ROOT, 'runner', 'wheels');
let tmp: string;
let sshd: Sshd;
let venvPython: string;
let sitePackages: string;
let closedIndex: string;
let marker: string;
let remoteDir: string;
const saved = { ...process.env };

interface Mindcv {
  ok: boolean;
  version: string | null;
  packages: Record<string, string | null>;
}

/** A folder of links to the project venv's own installed packages, put on the target venv's path. */
function linkPackages(name: string, entries: readonly string[], site = sitePackages): void {
  const from = execFileSync(
    PYTHON,
    ['-c', 'import numpy, os; print(os.path.dirname(os.path.dirname(numpy.__file__)))'],
    {
      encoding: 'utf8',
    },
  ).trim();
  const dir = path.join(tmp, name);
  mkdirSync(dir);
  for (const e of readdirSync(from).filter((f) => entries.some((p) => f === p || f.startsWith(`${p}-`)))) {
    symlinkSync(path.join(from, e), path.join(dir, e));
  }
  writeFileSync(path.join(site, `${name}.pth`), dir + '\n');
}

/** A venv without pip (ensurepip takes 20 s on a loaded machine: the project venv's pip is linked in). */
function freshVenv(name: string): [python: string, site: string] {
  const venv = path.join(tmp, name);
  execFileSync(PYTHON, ['-m', 'venv', '--without-pip', venv]);
  const python = path.join(venv, 'bin', 'python');
  const site = execFileSync(python, ['-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])'], {
    encoding: 'utf8',
  }).trim();
  return [python, site];
}

before(async () => {
  requirePython();
  tmp = mkdtempSync(path.join(tmpdir(), 'aft-it-mindcv-'));
  sshd = await startSshd();
  closedIndex = `http://127.0.0.1:${await freePort()}/simple`;
  // This machine's pip too: no index, no config, no find-links from the environment.
  Object.assign(process.env, { PIP_INDEX_URL: closedIndex, PIP_CONFIG_FILE: '/dev/null', PIP_RETRIES: '0' });
  delete process.env.PIP_FIND_LINKS;
  delete process.env.PIP_EXTRA_INDEX_URL;
  [venvPython, sitePackages] = freshVenv(`venv "t" it's`);
  linkPackages('numpy-and-pip', ['numpy', 'numpy.libs', 'pip']);
  marker = path.join(tmp, 'injected');
  remoteDir = path.join(tmp, `wheels 'q' "dq" $(touch ${marker}); x`);
});
after(async () => {
  process.env = saved;
  await sshd?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

function target(): TargetDef {
  return {
    id: 'ssh:loopback',
    kind: 'ssh',
    label: 'loopback',
    source: 'settings',
    description: '',
    runsRoot: path.join(tmp, 'runs'),
    ssh: {
      dest: sshd.destination,
      runner: {
        python: venvPython,
        runnerDir: RUNNER_DIR,
        // The user's own set-up line: the target's pip, too, can reach no index.
        setup: [
          `unset PIP_FIND_LINKS PIP_EXTRA_INDEX_URL; export PIP_INDEX_URL=${closedIndex} PIP_CONFIG_FILE=/dev/null`,
        ],
      },
      deploy: false,
    },
  };
}

async function doctorMindcv(): Promise<Mindcv> {
  const out = await runRunner<{ mindcv: Mindcv }>(makeTarget(target(), { controlDir: sshd.controlDir }), ['doctor']);
  return out.mindcv;
}

function options(steps: InstallStep[], wheelsDir = WHEELS) {
  return {
    controlDir: sshd.controlDir,
    wheelsDir,
    localPythons: [PYTHON],
    remoteDir,
    onStep: (s: InstallStep) => steps.push(s),
  };
}

test('a tampered carried wheel is refused before anything reaches the target', { timeout: 60_000 }, async () => {
  const dir = path.join(tmp, 'tampered wheels');
  mkdirSync(dir);
  for (const w of CARRIED_WHEELS) copyFileSync(path.join(WHEELS, w.file), path.join(dir, w.file));
  const f = path.join(dir, CARRIED_WHEELS[1].file);
  const body = readFileSync(f);
  body[100] ^= 1;
  writeFileSync(f, body);
  const steps: InstallStep[] = [];
  await assert.rejects(
    installMindcv(target(), options(steps, dir)),
    /tqdm-4\.70\.1-py3-none-any\.whl has sha256 .* refused/,
  );
  assert.deepEqual(steps, ['verify']);
  assert.ok(!existsSync(remoteDir));

  // And on arrival: bytes that are not what their sha256 says are not written.
  const good = readFileSync(path.join(WHEELS, CARRIED_WHEELS[1].file));
  await assert.rejects(
    putWheels(
      target(),
      [{ name: CARRIED_WHEELS[1].file, sha256: CARRIED_WHEELS[1].sha256, body }],
      remoteDir,
      options([]),
    ),
    /arrived with sha256 [0-9a-f]{64}, expected c293e525.*nothing was written/,
  );
  assert.ok(!existsSync(remoteDir));
  assert.ok(good.length > 0);
});

test(
  'without PyYAML and with no index anywhere, the install stops with the commands to run by hand',
  { timeout: 120_000 },
  async () => {
    assert.equal((await doctorMindcv()).packages.pyyaml, null);
    const steps: InstallStep[] = [];
    await assert.rejects(installMindcv(target(), options(steps)), (e: Error) => {
      assert.ok(e instanceof MindcvInstallError, String(e));
      assert.match(
        e.message,
        /PyYAML is missing on loopback, its pip could not fetch pyyaml>=6\.0,<7, and no Python here/,
      );
      const text = e.commands.join('\n');
      assert.match(text, /download .*--python-version 3\.11 --implementation cp --abi cp311 .*'pyyaml>=6\.0,<7'/);
      assert.match(text, /^scp .*mindcv-0\.3\.0-py3-none-any\.whl.* pyyaml-wheel\/\*\.whl /m);
      assert.match(text, /install --no-index --find-links .* 'mindcv==0\.3\.0' 'tqdm==4\.70\.1' 'pyyaml>=6\.0,<7'$/);
      return true;
    });
    assert.deepEqual(steps, ['verify', 'probe', 'pyyaml-online', 'pyyaml-download']);
    assert.ok(!existsSync(remoteDir), 'nothing was copied');
    assert.equal((await doctorMindcv()).ok, false);
  },
);

test(
  'with PyYAML on the box: the carried wheels are copied, installed with --no-index, and doctor reports mindcv 0.3.0',
  { timeout: 120_000 },
  async () => {
    linkPackages('pyyaml-from-box', ['yaml', '_yaml', 'pyyaml']);
    const before = await doctorMindcv();
    assert.deepEqual([before.ok, before.packages], [false, { mindcv: null, pyyaml: '6.0.4', tqdm: null }]);
    assert.match(doctorRows({ mindcv: before }).find((r) => r.label === 'mindcv')?.description ?? '', /mindcv missing/);

    const steps: InstallStep[] = [];
    const pip: string[] = [];
    const result = await installMindcv(target(), {
      ...options(steps),
      onCommand: (argv, code, output) => void (argv.includes('install') && pip.push(`${code} ${output}`)),
    });
    // pip looked in the copied folder only: never at the (closed) index.
    assert.equal(pip.length, 1);
    assert.match(pip[0], /^0 Looking in links: /);
    assert.ok(!pip[0].includes(closedIndex) && !/Looking in indexes/.test(pip[0]), pip[0]);
    assert.deepEqual(steps, ['verify', 'probe', 'copy', 'install']);
    assert.equal(result.pyyaml, 'present');
    assert.deepEqual(result.findLinks, [remoteDir]);
    assert.deepEqual(readdirSync(remoteDir).sort(), CARRIED_WHEELS.map((w) => w.file).sort());
    for (const w of CARRIED_WHEELS) assert.equal(await sha256File(path.join(remoteDir, w.file)), w.sha256);
    assert.ok(!existsSync(marker), 'the folder name was not run by a shell');

    const now = await doctorMindcv();
    assert.deepEqual(
      [now.ok, now.version, now.packages],
      [true, '0.3.0', { mindcv: '0.3.0', pyyaml: '6.0.4', tqdm: '4.70.1' }],
    );
    // Installed into the target's venv, as published.
    assert.ok(readdirSync(sitePackages).includes('mindcv-0.3.0.dist-info'));
  },
);

test(
  'on this machine: pip reads the carried wheels where they are; a cancel stops it first',
  { timeout: 120_000 },
  async () => {
    const [python, site] = freshVenv(`local venv 'l' "q"`);
    linkPackages('local-deps', ['numpy', 'numpy.libs', 'pip', 'yaml', '_yaml', 'pyyaml'], site);
    const def: TargetDef = {
      id: 'local',
      kind: 'local',
      label: 'This machine',
      source: 'local',
      description: '',
      runsRoot: path.join(tmp, 'local runs'),
      local: { python, runnerDir: RUNNER_DIR },
    };
    const doctor = async () => (await runRunner<{ mindcv: Mindcv }>(makeTarget(def, {}), ['doctor'])).mindcv;
    assert.equal((await doctor()).ok, false);

    const abort = new AbortController();
    const cancelled: InstallStep[] = [];
    const base = { wheelsDir: WHEELS, localPythons: [PYTHON] };
    await assert.rejects(
      installMindcv(def, {
        ...base,
        signal: abort.signal,
        onStep: (s) => (cancelled.push(s), s === 'probe' && abort.abort()),
      }),
      { name: 'AbortError' },
    );
    assert.deepEqual(cancelled, ['verify', 'probe']);
    assert.equal((await doctor()).ok, false);

    const steps: InstallStep[] = [];
    const result = await installMindcv(def, { ...base, onStep: (s) => steps.push(s) });
    assert.deepEqual(steps, ['verify', 'probe', 'copy', 'install']);
    assert.deepEqual(result.findLinks, [WHEELS]);
    const now = await doctor();
    assert.deepEqual([now.ok, now.packages], [true, { mindcv: '0.3.0', pyyaml: '6.0.4', tqdm: '4.70.1' }]);
  },
);
