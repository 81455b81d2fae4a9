import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { scriptOf } from '../../../src/core/ssh/shellQuote';
import {
  buildTargets,
  doctorFailureRow,
  doctorRows,
  npuChoices,
  expandHome,
  localPython,
  makeTarget,
  remotePath,
  targetsToList,
  type TargetInputs,
} from '../../../src/core/targets/model';
import type { SshTarget } from '../../../src/core/targets/target';

const inputs = (extra: Partial<TargetInputs> = {}): TargetInputs => ({
  localRunner: { python: '/venv/bin/python', runnerDir: '/ext/runner' },
  localRunsRoot: '/home/me/.ascend-finetune/runs',
  hostname: 'atlas-01',
  sshConfigHosts: [],
  sshSettings: [],
  remoteDefaults: { python: 'python3', runsRoot: '.ascend-finetune/runs' },
  ...extra,
});

test('this machine comes first and shows the host name', () => {
  const [local, ...rest] = buildTargets(inputs());
  assert.equal(rest.length, 0);
  assert.deepEqual(
    [local.id, local.kind, local.label, local.description],
    ['local', 'local', 'This machine', 'atlas-01'],
  );
  assert.equal(local.local?.python, '/venv/bin/python');
});

test('settings hosts first, in order, then ~/.ssh/config hosts by name, each host once', () => {
  const targets = buildTargets(
    inputs({
      sshConfigHosts: [
        { alias: 'zeta', file: 'c', line: 1 },
        { alias: 'box', hostName: '10.0.0.2', file: 'c', line: 3 },
        { alias: 'alpha', file: 'c', line: 5 },
      ],
      sshSettings: [
        {
          host: 'npu2',
          user: 'me',
          port: 2222,
          python: '/opt/py/bin/python3',
          setup: 'source /usr/local/Ascend/ascend-toolkit/set_env.sh',
          runsRoot: '/scratch/runs',
        },
        { host: 'box' },
        { host: ' ' },
        { host: 'npu2' },
      ],
    }),
  );
  assert.deepEqual(
    targets.map((t) => t.id),
    ['local', 'ssh:npu2', 'ssh:box', 'ssh:alpha', 'ssh:zeta'],
  );
  const npu2 = targets[1];
  assert.deepEqual(npu2.ssh?.dest, { host: 'npu2', user: 'me', port: 2222 });
  assert.deepEqual(npu2.ssh?.runner, {
    python: '/opt/py/bin/python3',
    runnerDir: undefined,
    setup: ['source /usr/local/Ascend/ascend-toolkit/set_env.sh'],
  });
  assert.equal(npu2.runsRoot, '/scratch/runs');
  assert.equal(targets[2].description, 'settings, ~/.ssh/config');
  assert.equal(targets[3].runsRoot, '.ascend-finetune/runs');
  assert.equal(targets[3].ssh?.runner.python, 'python3');
  assert.equal(targets.find((t) => t.id === 'ssh:box')?.description, 'settings, ~/.ssh/config');
});

test('the local Python: the setting, else the checkout .venv, else python3', () => {
  assert.equal(
    localPython(' ~/py/bin/python ', '/ext', '/home/me', () => true),
    '/home/me/py/bin/python',
  );
  assert.equal(
    localPython('', '/ext', '/home/me', (p) => p === '/ext/.venv/bin/python'),
    '/ext/.venv/bin/python',
  );
  assert.equal(
    localPython(undefined, '/ext', '/home/me', () => false),
    'python3',
  );
  assert.equal(expandHome('~', '/h'), '/h');
  assert.equal(expandHome('~x', '/h'), '~x');
});

test('makeTarget: an ssh target quotes the helper launcher once, after the set-up line', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'aft-tm-'));
  try {
    const [, box] = buildTargets(inputs({ sshSettings: [{ host: 'box', setup: 'source /x/set_env.sh' }] }));
    const t = makeTarget(box, { controlDir: path.join(dir, 'ctl'), launcher: ['-c', 'print(1)'] }) as SshTarget;
    const argv = t.argv(['/a b']);
    assert.equal(
      scriptOf(argv[argv.length - 1]),
      "source /x/set_env.sh && export PYTHONUNBUFFERED=1 && python3 -c 'print(1)' '/a b'",
    );
    assert.equal(makeTarget(buildTargets(inputs())[0]).label, 'this machine');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('doctor rows: Python, MindSpore with backends, CANN, NPUs with HBM and utilisation', () => {
  const rows = doctorRows({
    python: { version: '3.11.7', executable: '/v/bin/python', ok: true },
    mindspore: { ok: true, version: '2.10.0', backends: { CPU: true, Ascend: true } },
    cann: {
      found: true,
      home: '/usr/local/Ascend/ascend-toolkit/latest',
      set_env: '/usr/local/Ascend/ascend-toolkit/set_env.sh',
      env_loaded: false,
    },
    npu: {
      npu_smi: '/usr/local/bin/npu-smi',
      devices: [{ id: 0, name: '910B', hbm_used_mb: 2048, hbm_total_mb: 65536, util: 12 }, { id: 1 }],
    },
    host: 'atlas',
    cpu_count: 192,
  });
  assert.deepEqual(
    rows.map((r) => r.label),
    ['Python', 'MindSpore', 'CANN', 'NPU 0', 'NPU 1', 'Host'],
  );
  assert.equal(rows[1].description, '2.10.0 · CPU, Ascend');
  assert.match(rows[2].fix ?? '', /source \/usr\/local\/Ascend\/ascend-toolkit\/set_env.sh/);
  assert.equal(rows[3].description, '910B · HBM 2.0/64.0 GiB · 12% AI Core');
  assert.ok(rows.every((r) => !r.problem));
  assert.equal(npuChoices({ npu: { devices: [{}, {}] } }).length, 2);
  assert.equal(npuChoices({ npu: { devices: [] } }).length, 0);
});

test('doctor rows: a missing MindSpore is a problem with its fix; the real CPU output has no problem', () => {
  const rows = doctorRows({
    python: { version: '3.12.1', executable: 'python3', ok: true },
    mindspore: {
      ok: false,
      error: "ModuleNotFoundError: No module named 'mindspore'",
      fix: 'pip install mindspore==2.10.0 into the Python that the target uses',
    },
    cann: { found: false, home: null, set_env: null, env_loaded: false },
    npu: { npu_smi: null, devices: [] },
  });
  const ms = rows.find((r) => r.label === 'MindSpore');
  assert.ok(ms?.problem);
  assert.match(ms?.fix ?? '', /pip install mindspore/);
  const cpu = doctorRows(
    JSON.parse(
      '{"python": {"version": "3.11.7", "executable": "/work/main/.venv/bin/python", "ok": true}, "mindspore": {"ok": true, "version": "2.10.0", "backends": {"CPU": true, "Ascend": false}}, "cann": {"found": false, "home": null, "set_env": null, "env_loaded": false}, "npu": {"npu_smi": null, "devices": []}, "host": "vm", "cpu_count": 2}',
    ),
  );
  assert.deepEqual(
    cpu.map((r) => [r.label, r.description, r.problem]),
    [
      ['Python', '3.11.7 (/work/main/.venv/bin/python)', false],
      ['MindSpore', '2.10.0 · CPU', false],
      ['CANN', 'not found (CPU only)', false],
      ['NPU', 'no npu-smi (no NPU)', false],
      ['Host', 'vm · 2 CPUs', false],
    ],
  );
});

test('doctor that cannot run: missing Python, missing runner, an ssh login, anything else', () => {
  const [local, box] = buildTargets(inputs({ sshSettings: [{ host: 'box' }] }));
  assert.deepEqual(
    doctorFailureRow(local, { message: 'runner doctor could not run python9: spawn python9 ENOENT', exitCode: null })
      .label,
    'Python',
  );
  assert.match(
    doctorFailureRow(local, {
      message: 'x',
      exitCode: 1,
      stderrTail: '/usr/bin/python3: No module named ascend_finetune',
    }).description,
    /not installed/,
  );
  const ssh = doctorFailureRow(box, {
    message: 'runner doctor exited with 255: me@box: Permission denied (publickey).',
    exitCode: 255,
  });
  assert.equal(ssh.label, 'SSH');
  assert.match(ssh.fix ?? '', /Log In to SSH Target/);
  assert.equal(
    doctorFailureRow(box, { message: 'exited with 127', exitCode: 127, stderrTail: 'sh: 1: python3: not found' }).label,
    'Python',
  );
  assert.equal(doctorFailureRow(local, { message: 'runner doctor exited with 1: boom', exitCode: 1 }).label, 'Doctor');
});

test('remote runs roots lose their ~ (no shell expands it; commands start in the home folder)', () => {
  assert.equal(remotePath('~/.ascend-finetune/runs'), '.ascend-finetune/runs');
  assert.equal(remotePath('~'), '.');
  assert.equal(remotePath('/scratch/runs'), '/scratch/runs');
  const [, box] = buildTargets(inputs({ sshSettings: [{ host: 'box', runsRoot: '~/r' }] }));
  assert.equal(box.runsRoot, 'r');
});

test('only this machine, settings hosts and hosts with known runs are listed on activation', () => {
  const targets = buildTargets(
    inputs({
      sshConfigHosts: [
        { alias: 'github.com', file: 'c', line: 1 },
        { alias: 'old-box', file: 'c', line: 2 },
      ],
      sshSettings: [{ host: 'npu' }],
    }),
  );
  assert.deepEqual(
    targets.map((t) => t.source),
    ['local', 'settings', 'sshConfig', 'sshConfig'],
  );
  assert.deepEqual(
    targetsToList(targets, ['ssh:old-box', 'ssh:gone']).map((t) => t.id),
    ['local', 'ssh:npu', 'ssh:old-box'],
  );
});

test('NPU rows: HBM on 910-class cards, memory on 310P, chips told apart on multi-chip cards', () => {
  const rows = doctorRows({
    npu: {
      npu_smi: '/usr/local/bin/npu-smi',
      devices: [
        { id: 0, chip: 0, name: '910B3', hbm_used_mb: 3390, hbm_total_mb: 65536, util: 12 },
        {
          id: 2,
          chip: 0,
          name: '310P3',
          memory_used_mb: 1024,
          memory_total_mb: 44280,
          hbm_used_mb: null,
          hbm_total_mb: null,
        },
        { id: 2, chip: 1, name: '310P3', memory_used_mb: 2048, memory_total_mb: 43693 },
      ],
    },
  });
  const npus = rows.filter((r) => r.label.startsWith('NPU'));
  assert.deepEqual(
    npus.map((r) => r.label),
    ['NPU 0 chip 0', 'NPU 2 chip 0', 'NPU 2 chip 1'],
  );
  assert.equal(npus[0].description, '910B3 · HBM 3.3/64.0 GiB · 12% AI Core');
  assert.equal(npus[1].description, '310P3 · memory 1.0/43.2 GiB');
  const single = doctorRows({
    npu: {
      devices: [
        { id: 0, chip: 0, name: '910B3' },
        { id: 1, chip: 0, name: '910B3' },
      ],
    },
  });
  assert.deepEqual(
    single.filter((r) => r.label.startsWith('NPU')).map((r) => r.label),
    ['NPU 0', 'NPU 1'],
  );
});

test('NPU rows name the processes npu-smi lists on each device (doctor on a recorded busy 910B box)', () => {
  // test/unit/fixtures/doctor/: `doctor` run with a fake npu-smi printing a recorded 8-NPU 910B table
  const doctor = JSON.parse(
    readFileSync(path.join(__dirname, '..', 'fixtures', 'doctor', '910b3_8npu_busy.json'), 'utf8'),
  );
  const npus = doctorRows(doctor).filter((r) => r.label.startsWith('NPU'));
  assert.equal(npus.length, 8);
  assert.ok(
    npus.every((r) => r.busy),
    'every NPU has a process on it',
  );
  assert.match(npus[0].description, /busy: python \(pid 13128 53\.3 GiB\)/);
  assert.match(npus[7].description, /pid 13616/);
  const idle = doctorRows({ ...doctor, npu: { ...doctor.npu, processes: [] } }).filter((r) =>
    r.label.startsWith('NPU'),
  );
  assert.ok(idle.every((r) => !r.busy && !r.description.includes('busy')));
  // junk in the process list is skipped, never thrown on
  const junk = doctorRows({ ...doctor, npu: { ...doctor.npu, processes: [null, 7, { npu: '0' }] } });
  assert.ok(junk.filter((r) => r.label.startsWith('NPU')).every((r) => !r.busy));
});

test('the wizard offers each device by its logical id, busy ones marked', () => {
  const doctor = JSON.parse(
    readFileSync(path.join(__dirname, '..', 'fixtures', 'doctor', '910b3_8npu_busy.json'), 'utf8'),
  );
  const choices = npuChoices(doctor);
  assert.deepEqual(
    choices.map((c) => c.id),
    [0, 1, 2, 3, 4, 5, 6, 7],
  );
  assert.ok(choices.every((c) => c.busy && /busy: python/.test(c.description)));
  // an A3 NPU has two chips: device ids come from their Phy-ID, as the runner maps them
  const a3 = npuChoices({
    npu: {
      devices: [
        { id: 0, chip: 0, phy_id: 0, name: 'Ascend910' },
        { id: 0, chip: 1, phy_id: 1, name: 'Ascend910' },
        { id: 1, chip: 0, phy_id: 2, name: 'Ascend910' },
        { id: 1, chip: 1, phy_id: 3, name: 'Ascend910' },
      ],
      processes: [{ npu: 1, chip: 1, pid: 9, name: 'python', memory_mb: 100 }],
    },
  });
  assert.deepEqual(
    a3.map((c) => [c.id, c.busy]),
    [
      [0, false],
      [1, false],
      [2, false],
      [3, true],
    ],
  );
  assert.match(a3[3].description, /^NPU 1 chip 1 · /);
  assert.deepEqual(npuChoices({ npu: { devices: [] } }), []);
  assert.deepEqual(npuChoices('junk'), []);
});
