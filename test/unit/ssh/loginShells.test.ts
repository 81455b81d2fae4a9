// sshd runs the one command string as `<login shell> -c <string>`. These tests do exactly that
// with every login shell on this machine (fish and tcsh are installed on purpose: .ci/run), and
// check that the runner argv and the set-up line survive each of them unchanged and run nothing.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import { anyShellCommand, scriptOf } from '../../../src/core/ssh/shellQuote';
import { sshArgv } from '../../../src/core/ssh/ssh';
import { remoteSetup } from '../../../src/core/targets/target';

/** The shells a remote account may log in with; the POSIX ones and the two that are not. */
const SHELLS = ['/bin/sh', '/bin/bash', '/bin/dash', '/usr/bin/zsh', '/usr/bin/fish', '/bin/tcsh', '/bin/csh'];
const REQUIRED = new Set(['/bin/sh', '/bin/bash', '/usr/bin/fish', '/bin/tcsh']);

// Every argument a login shell could act on: quotes, expansions, separators, a trailing backslash
// (fish reads `\'` inside single quotes as a quote), history `!` and newlines (tcsh), globs.
const hostile = [
  "it's",
  '"double"',
  '$(touch MARKER1)',
  '`touch MARKER2`',
  '; touch MARKER3; #',
  'ends with a backslash\\',
  "'; touch MARKER4; echo '",
  'line\nbreak',
  '!! !-1 !touch',
  '*',
  '~',
  '${HOME} $HOME %self',
  '\\',
  "\\'",
  '{a,b}',
  '',
  'ünïcødé 日本 🚀',
  'tab\there',
];

const SCRIPT =
  'console.log(JSON.stringify({ argv: process.argv.slice(1), pp: process.env.PYTHONPATH, unbuf: process.env.PYTHONUNBUFFERED }))';

let root: string;
/** The working folder of each shell, where a planted `touch` would land; its home is elsewhere (fish writes there). */
let tmp: string;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'aft-shells-'));
  tmp = path.join(root, 'cwd');
  mkdirSync(tmp);
  mkdirSync(path.join(root, 'home'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** What sshd does with the command string: `<shell> -c <string>`, in the login's home. */
function asLoginShell(shell: string, command: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(shell, ['-c', command], {
    cwd: tmp,
    env: { PATH: process.env.PATH, HOME: path.join(root, 'home'), LANG: 'C.UTF-8' },
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

for (const shell of SHELLS) {
  const present = existsSync(shell);
  test(
    `login shell ${shell}: argv and PYTHONPATH arrive unchanged, nothing runs`,
    { skip: !present && !REQUIRED.has(shell) ? `${shell} is not installed` : false },
    () => {
      assert.ok(present, `${shell} is required here (apt-get install fish tcsh)`);
      const runnerDir = path.join(root, "runner it's $(touch MARKER5) `x`; !x \\");
      const setup = remoteSetup({ python: process.execPath, runnerDir, setup: ['cd .'] });
      const argv = sshArgv({ host: 'h' }, [process.execPath, '-e', SCRIPT, ...hostile], { setup });
      const r = asLoginShell(shell, argv.at(-1)!);
      assert.equal(r.status, 0, `${shell} failed: ${r.stderr}`);
      const out = JSON.parse(r.stdout) as { argv: string[]; pp: string; unbuf: string };
      assert.deepEqual(out.argv, hostile);
      assert.equal(out.pp.split(':')[0], runnerDir);
      assert.equal(out.unbuf, '1');
      assert.deepEqual(readdirSync(tmp), [], 'nothing was created: no planted command ran');
    },
  );

  test(
    `login shell ${shell}: a word ending in a backslash does not end the quoting`,
    { skip: !present && !REQUIRED.has(shell) ? `${shell} is not installed` : false },
    () => {
      // No runnerDir: the set-up line is one every shell understands, so only the quoting is tested.
      const argv = sshArgv({ host: 'h' }, [process.execPath, '-e', SCRIPT, 'run\\', ' ; touch PLANTED ; #'], {
        setup: ['export PYTHONUNBUFFERED=1'],
      });
      const r = asLoginShell(shell, argv.at(-1)!);
      assert.equal(existsSync(path.join(tmp, 'PLANTED')), false, `${shell} ran the planted command`);
      assert.equal(r.status, 0, `${shell} failed: ${r.stderr}`);
      assert.deepEqual((JSON.parse(r.stdout) as { argv: string[] }).argv, ['run\\', ' ; touch PLANTED ; #']);
    },
  );
}

test('a set-up line in bash syntax (`source`) still works where /bin/sh is dash', () => {
  const file = path.join(root, 'env.sh');
  execFileSync('sh', ['-c', `printf 'export FROM_SETUP=yes\\n' > "$1"`, 'sh', file]);
  const argv = sshArgv({ host: 'h' }, [process.execPath, '-e', 'console.log(process.env.FROM_SETUP)'], {
    setup: [`source ${file}`],
  });
  for (const shell of ['/bin/sh', '/usr/bin/fish', '/bin/tcsh']) {
    const r = asLoginShell(shell, argv.at(-1)!);
    assert.equal(r.status, 0, `${shell}: ${r.stderr}`);
    assert.equal(r.stdout.trim(), 'yes', shell);
  }
});

test('a host without bash runs the script with /bin/sh', () => {
  const bin = path.join(root, 'bin');
  mkdirSync(bin);
  symlinkSync(execFileSync('sh', ['-c', 'command -v awk'], { encoding: 'utf8' }).trim(), path.join(bin, 'awk'));
  const argv = sshArgv({ host: 'h' }, [process.execPath, '-e', SCRIPT, ...hostile], {
    setup: ['test -z "${BASH_VERSION-}"', 'export PYTHONUNBUFFERED=1'],
  });
  for (const shell of ['/bin/sh', '/usr/bin/fish', '/bin/tcsh']) {
    const r = spawnSync(shell, ['-c', argv.at(-1)!], {
      cwd: tmp,
      env: { PATH: bin, HOME: path.join(root, 'home') },
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, `${shell}: ${r.stderr}`);
    assert.deepEqual((JSON.parse(r.stdout) as { argv: string[] }).argv, hostile, shell);
  }
  assert.deepEqual(readdirSync(tmp), []);
});

test('the command line: plain words stay readable, anything else is one encoded sh -c word', () => {
  assert.equal(anyShellCommand('python3 -m ascend_finetune doctor'), 'python3 -m ascend_finetune doctor');
  for (const script of ["ls '$(x)'", 'a && b', 'echo ~', 'echo %self', 'A=1 b', 'x\ny', 'echo !!']) {
    const line = anyShellCommand(script);
    assert.match(line, /^exec \/bin\/sh -c '[^'\\!\n]*' sh [0-9a-f]+$/, script);
    assert.equal(scriptOf(line), script);
  }
  assert.equal(scriptOf('tail -F /x'), 'tail -F /x');
  // A long script still fits one argument; one past Linux's limit is refused here, not by the host.
  const long = 'x'.repeat(60_000) + ';';
  assert.equal(scriptOf(anyShellCommand(long)), long);
  assert.throws(() => anyShellCommand(long.repeat(2)), /too long/);
});
