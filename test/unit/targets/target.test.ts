import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import { followRun } from '../../../src/core/runs/attach';
import { anyShellCommand } from '../../../src/core/ssh/shellQuote';
import { runRunner } from '../../../src/core/targets/runnerCli';
import { asTarget, localTarget, remoteSetup, sshTarget } from '../../../src/core/targets/target';
import type { RunEvent } from '../../../src/shared/eventsProtocol';

const FAKE_RUNNER = path.join(__dirname, '..', 'fixtures', 'fake-runner.mjs');
// A fake `ssh` that runs the command string here with `sh -c`: the quoting meets a real shell.
const FAKE_SSH = path.join(__dirname, '..', 'fixtures', 'fake-ssh.mjs');
chmodSync(FAKE_SSH, 0o755); // a checkout may have lost the executable bit
const nasty = 'it\'s "quoted" $(touch MARKER) `touch MARKER`; ü 日本';

let tmp: string;
beforeEach(() => (tmp = mkdtempSync(path.join(tmpdir(), 'aft-target-'))));
afterEach(() => rmSync(tmp, { recursive: true, force: true }));

test('the ssh argv: options, --, host, set-up lines and the quoted runner argv', () => {
  const control = path.join(tmp, 'ctl');
  const t = sshTarget(
    { host: 'atlas', user: 'me', port: 2222 },
    {
      python: '/opt/py/bin/python3',
      runnerDir: '.ascend-finetune/runner/0.1.0',
      setup: ['source /usr/local/Ascend/ascend-toolkit/set_env.sh'],
    },
    { controlDir: control, platform: 'linux' },
  );
  assert.deepEqual(t.argv(['attach', '/runs/my run', '--since', '4']), [
    '-o',
    'BatchMode=yes',
    '-o',
    'ConnectTimeout=15',
    '-o',
    'ServerAliveInterval=15',
    '-o',
    'ServerAliveCountMax=3',
    '-o',
    'ControlMaster=auto',
    '-o',
    `ControlPath=${control}/%C`,
    '-o',
    'ControlPersist=10m',
    '-p',
    '2222',
    '-l',
    'me',
    '--',
    'atlas',
    anyShellCommand(
      'source /usr/local/Ascend/ascend-toolkit/set_env.sh' +
        ' && export PYTHONUNBUFFERED=1 PYTHONPATH=.ascend-finetune/runner/0.1.0${PYTHONPATH:+:$PYTHONPATH}' +
        " && /opt/py/bin/python3 -m ascend_finetune attach '/runs/my run' --since 4",
    ),
  ]);
  assert.equal(statSync(control).mode & 0o777, 0o700, 'the socket folder is created private');
  assert.equal(t.label, 'ssh atlas');
  assert.equal(t.program, 'ssh');
});

test('a socket folder others can use turns sharing off', () => {
  const control = path.join(tmp, 'open');
  const t = sshTarget({ host: 'h' }, { python: 'python3' }, { controlDir: control, platform: 'linux' });
  assert.ok(t.argv(['doctor']).some((a) => a.startsWith('ControlPath=')));
  chmodSync(control, 0o755);
  const open = sshTarget({ host: 'h' }, { python: 'python3' }, { controlDir: control, platform: 'linux' });
  assert.ok(!open.argv(['doctor']).some((a) => a.startsWith('Control')));
});

test('remote set-up prepends the runner folder to PYTHONPATH, quoted once', () => {
  assert.deepEqual(remoteSetup({ python: 'p', runnerDir: "/a b/it's" }), [
    "export PYTHONUNBUFFERED=1 PYTHONPATH='/a b/it'\\''s'${PYTHONPATH:+:$PYTHONPATH}",
  ]);
  assert.deepEqual(remoteSetup({ python: 'p' }), ['export PYTHONUNBUFFERED=1']);
});

test('asTarget keeps a Target and wraps a RunnerConfig as this machine', () => {
  const t = localTarget({ python: 'python3' });
  assert.equal(asTarget(t), t);
  assert.equal(asTarget({ python: '/x/python' }).program, '/x/python');
  assert.equal(asTarget({ python: '/x/python' }).label, 'this machine');
});

test('through a real shell: argv and PYTHONPATH reach the runner unchanged, nothing runs', async () => {
  const script =
    'console.log(JSON.stringify({ argv: process.argv.slice(1), pp: process.env.PYTHONPATH, unbuf: process.env.PYTHONUNBUFFERED }))';
  const t = sshTarget(
    { host: 'box' },
    { python: process.execPath, launcher: ['-e', script], runnerDir: `${tmp}/${nasty}` },
    { sshPath: FAKE_SSH },
  );
  const out = await runRunner<{ argv: string[]; pp: string; unbuf: string }>(
    t,
    ['launch', `${tmp}/${nasty}/spec.json`, '--runs-root', nasty],
    {
      cwd: tmp,
    },
  );
  assert.deepEqual(out.argv, ['launch', `${tmp}/${nasty}/spec.json`, '--runs-root', nasty]);
  assert.equal(out.pp.split(':')[0], `${tmp}/${nasty}`);
  assert.equal(out.unbuf, '1');
  assert.throws(() => statSync(path.join(tmp, 'MARKER')));
});

test('followRun over an ssh target reconnects with --since after a drop', async () => {
  const runDir = path.join(tmp, nasty);
  mkdirSync(runDir);
  const log = path.join(tmp, 'ssh.jsonl');
  process.env.FAKE_SSH_LOG = log;
  try {
    // The set-up line is how the scenario reaches the runner, as CANN's set_env.sh would.
    const setup = ['export FAKE_SCENARIO=drop-once'];
    const t = sshTarget(
      { host: 'box' },
      { python: process.execPath, launcher: [FAKE_RUNNER], setup },
      { sshPath: FAKE_SSH },
    );
    const events: RunEvent[] = [];
    for await (const e of followRun({ runner: t, runDir, backoffMs: 10 })) events.push(e);
    assert.deepEqual(
      events.map((e) => e.seq),
      Array.from({ length: 12 }, (_, i) => i + 1),
    );
    const calls = readFileSync(path.join(runDir, 'calls.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      calls.map((c: { args: string[] }) => c.args),
      [
        ['--since', '0'],
        ['--since', '5'],
      ],
    );
    const sshCalls = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as string[]);
    assert.equal(sshCalls.length, 2);
    assert.ok(sshCalls.every((a) => a.at(-3) === '--' && a.at(-2) === 'box'));
  } finally {
    delete process.env.FAKE_SSH_LOG;
  }
  assert.throws(() => statSync(path.join(tmp, 'MARKER')));
});

test('a missing ssh program is a clear error, not a retry loop', async () => {
  const t = sshTarget({ host: 'box' }, { python: 'python3' }, { sshPath: '/nonexistent/ssh' });
  await assert.rejects(runRunner(t, ['doctor']), /could not run \/nonexistent\/ssh/);
  await assert.rejects(
    (async () => {
      for await (const e of followRun({ runner: t, runDir: '/r', backoffMs: 1 })) void e;
    })(),
    /could not run \/nonexistent\/ssh/,
  );
});
