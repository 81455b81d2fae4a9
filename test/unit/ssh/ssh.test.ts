import assert from 'node:assert/strict';
import { test } from 'node:test';
import { canShareConnections, controlPath, remoteCommand, sshArgv, sshOptions } from '../../../src/core/ssh/ssh';

const BASE = [
  '-o',
  'BatchMode=yes',
  '-o',
  'ConnectTimeout=15',
  '-o',
  'ServerAliveInterval=15',
  '-o',
  'ServerAliveCountMax=3',
];

test('the plainest call: batch mode, timeouts, --, host, one command string', () => {
  assert.deepEqual(sshArgv({ host: 'box' }, ['python3', '-m', 'ascend_finetune', 'doctor']), [
    ...BASE,
    '--',
    'box',
    'python3 -m ascend_finetune doctor',
  ]);
});

test('user, port, identity, options and extra args, in that order, before --', () => {
  const argv = sshArgv(
    {
      host: 'gpu-1',
      user: 'me@corp',
      port: 2222,
      identityFile: '/k/id',
      options: { ProxyJump: 'bastion' },
      extraArgs: ['-F', '/dev/null'],
    },
    ['ls'],
    { connectTimeoutS: 5, serverAliveIntervalS: 30 },
  );
  assert.deepEqual(argv, [
    '-o',
    'BatchMode=yes',
    '-o',
    'ConnectTimeout=5',
    '-o',
    'ServerAliveInterval=30',
    '-o',
    'ServerAliveCountMax=3',
    '-p',
    '2222',
    '-l',
    'me@corp',
    '-i',
    '/k/id',
    '-o',
    'IdentitiesOnly=yes',
    '-o',
    'ProxyJump=bastion',
    '-F',
    '/dev/null',
    '--',
    'gpu-1',
    'ls',
  ]);
});

test('a host that looks like an option stays the destination', () => {
  const argv = sshArgv({ host: '-oProxyCommand=x' }, ['ls']);
  assert.deepEqual(argv.slice(-3), ['--', '-oProxyCommand=x', 'ls']);
});

test('connection sharing where the platform has it, with the socket folder passed in', () => {
  const share = ['-o', 'ControlMaster=auto', '-o', 'ControlPath=/home/u/.cache/aft/%C', '-o', 'ControlPersist=10m'];
  assert.deepEqual(sshOptions({ host: 'h' }, { controlDir: '/home/u/.cache/aft', platform: 'linux' }), [
    ...BASE,
    ...share,
  ]);
  assert.deepEqual(sshOptions({ host: 'h' }, { controlDir: '/home/u/.cache/aft/', platform: 'darwin' }), [
    ...BASE,
    ...share,
  ]);
  assert.deepEqual(sshOptions({ host: 'h' }, { controlDir: 'C:\\aft', platform: 'win32' }), BASE);
  assert.deepEqual(sshOptions({ host: 'h' }, { platform: 'linux' }), BASE, 'no folder, no sharing');
  assert.equal(canShareConnections('win32'), false);
  assert.equal(canShareConnections('linux'), true);
});

test('a socket folder too long for a Unix socket path falls back to the short one', () => {
  const long = '/Users/someone/Library/Application Support/Code/User/globalStorage/ascend-finetune.ascend-finetune/ssh';
  assert.equal(controlPath(long), undefined);
  assert.equal(controlPath(long, '/tmp/aft-501'), '/tmp/aft-501/%C');
  // 42 bytes of folder + 58 for "/<40 hex>.<16 random>" is exactly 100.
  assert.equal(controlPath('/' + 'a'.repeat(41)), '/' + 'a'.repeat(41) + '/%C');
  assert.equal(controlPath('/' + 'a'.repeat(42)), undefined);
  assert.equal(controlPath('/' + 'é'.repeat(21)), undefined, 'bytes count, not characters');
  const argv = sshOptions({ host: 'h' }, { controlDir: long, shortControlDir: '/tmp/aft-501', platform: 'darwin' });
  assert.ok(argv.includes('ControlPath=/tmp/aft-501/%C'));
});

test('an option value with spaces is double-quoted, as ssh reads -o like a config line', () => {
  const argv = sshOptions(
    { host: 'h', options: { UserKnownHostsFile: '/my dir/known' } },
    { controlDir: '/a b', platform: 'linux' },
  );
  assert.ok(argv.includes('ControlPath="/a b/%C"'));
  assert.ok(argv.includes('UserKnownHostsFile="/my dir/known"'));
});

test('remote command: set-up lines joined with && before the quoted argv', () => {
  const setup = 'source /usr/local/Ascend/ascend-toolkit/set_env.sh';
  assert.equal(
    remoteCommand(
      ['/opt/py/bin/python', '-m', 'ascend_finetune', 'attach', "/runs/it's a run", '--since', '7'],
      [setup, '  '],
    ),
    `${setup} && /opt/py/bin/python -m ascend_finetune attach '/runs/it'\\''s a run' --since 7`,
  );
  assert.equal(remoteCommand(['ls', '$(x)']), "ls '$(x)'");
});
