import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import { scriptOf } from '../../../src/core/ssh/shellQuote';
import { loginCommand, socketDir, tailCommand } from '../../../src/core/targets/consoleCommand';
import { makeTarget, buildTargets } from '../../../src/core/targets/model';
import type { SshTarget } from '../../../src/core/targets/target';

const [local, box] = buildTargets({
  localRunner: { python: 'python3' },
  localRunsRoot: '/r',
  hostname: 'h',
  sshConfigHosts: [],
  sshSettings: [{ host: 'box', port: 2222, setup: 'source /x/set_env.sh' }],
  remoteDefaults: { python: 'python3', runsRoot: 'runs' },
});

let dir: string;
beforeEach(() => (dir = mkdtempSync(path.join(tmpdir(), 'aft-cc-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test('local console: tail argv, no shell', () => {
  assert.deepEqual(tailCommand(local, '/runs/a b', { tty: true }), {
    file: 'tail',
    args: ['-n', '+1', '-F', '/runs/a b/console.log'],
  });
});

test('ssh console: -t before the options, the path quoted once, no set-up line needed', () => {
  const ctl = path.join(dir, 'ctl');
  const c = tailCommand(box, "/runs/it's $(x)", { tty: true, controlDir: ctl });
  assert.equal(c.file, 'ssh');
  assert.equal(c.args[0], '-t');
  assert.ok(c.args.includes(`ControlPath=${ctl}/%C`));
  assert.deepEqual(c.args.slice(-3, -1), ['--', 'box']);
  assert.equal(scriptOf(c.args.at(-1)!), "tail -n +1 -F '/runs/it'\\''s $(x)/console.log'");
  assert.notEqual(tailCommand(box, '/r', { tty: false }).args[0], '-t');
});

test('the login terminal shares the socket the runner calls use, and may prompt', () => {
  const folders = { controlDir: path.join(dir, 'x'.repeat(80)), shortControlDir: path.join(dir, 's') };
  assert.equal(socketDir(folders), folders.shortControlDir, 'too long for a socket: the short folder');
  const login = loginCommand(box, folders);
  const runner = (makeTarget(box, folders) as SshTarget).argv(['doctor']);
  const controlPathOf = (args: string[]) => args.find((a) => a.startsWith('ControlPath='));
  assert.equal(controlPathOf(login.args), controlPathOf(runner));
  assert.ok(controlPathOf(login.args));
  // ssh takes the first value of an option: the interactive ones come first
  assert.deepEqual(login.args.slice(0, 4), ['-o', 'BatchMode=no', '-o', 'ControlMaster=auto']);
  assert.ok(login.args.indexOf('BatchMode=yes') > 1);
  assert.deepEqual(login.args.slice(-2, -1), ['box']);
  assert.match(scriptOf(login.args.at(-1)!), /^echo 'Logged in to box\./);
  assert.throws(() => loginCommand(local, folders));
});
