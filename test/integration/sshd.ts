// A real OpenSSH server on 127.0.0.1 for the integration tests and the latency bench: Debian's
// sshd with throwaway host and user keys in a temp folder, key login only. .ci/run installs
// openssh-server, so a missing sshd is an error here, never a reason to skip.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SshDestination } from '../../src/core/ssh/ssh';
import { accepts, freePort } from '../support/net';

export const SSHD = '/usr/sbin/sshd';

export interface Sshd {
  port: number;
  /** Where to connect, with the client options that trust this server's throwaway key. */
  destination: SshDestination;
  /** A private folder for connection-sharing sockets. */
  controlDir: string;
  /** sshd's own log (-e), for failure messages. */
  log(): string;
  /**
   * A throwaway account whose login shell is `shell` (e.g. /usr/bin/fish), reached with the same
   * key; removed again by `stop()`. It shares root's uid: this checkout and its .venv live under
   * /root-owned folders another uid could not run, and sshd only takes the shell (and home) from
   * the account's own passwd line, which is what is tested.
   */
  addLoginUser(shell: string): SshDestination;
  stop(): Promise<void>;
}

export async function startSshd(): Promise<Sshd> {
  if (!existsSync(SSHD)) {
    throw new Error(
      `${SSHD} is missing: install Debian's openssh-server (apt-get install openssh-server); .ci/run does this`,
    );
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'aft-sshd-'));
  const keygen = (file: string) =>
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'aft-test', '-f', file]);
  keygen(path.join(dir, 'host_key'));
  keygen(path.join(dir, 'user_key'));
  writeFileSync(path.join(dir, 'authorized_keys'), readFileSync(path.join(dir, 'user_key.pub')));
  // sshd refuses to start without its privilege-separation folder (packaged systems make it at boot).
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });

  const port = await freePort();
  const config = path.join(dir, 'sshd_config');
  writeFileSync(
    config,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${dir}/host_key`,
      `AuthorizedKeysFile ${dir}/authorized_keys`,
      `PidFile ${dir}/sshd.pid`,
      'PubkeyAuthentication yes',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PermitRootLogin prohibit-password',
      'StrictModes no', // the temp folder's modes are not sshd's business in a test
      'UsePAM no',
      'LogLevel INFO',
      '',
    ].join('\n'),
  );

  let log = '';
  const child = spawn(SSHD, ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr.on('data', (b: Buffer) => (log = (log + b.toString()).slice(-20_000)));
  await waitForPort(port, child, () => log);

  const users: string[] = [];
  const addLoginUser = (shell: string): SshDestination => {
    if (!existsSync(shell)) throw new Error(`${shell} is missing: apt-get install fish tcsh (.ci/run does this)`);
    const name = `aft-${path.basename(shell)}${users.length}-${path.basename(dir).slice(-6)}`
      .toLowerCase()
      .replace(/[^a-z0-9-]/g, '');
    const home = path.join(dir, `home-${name}`);
    mkdirSync(home, { mode: 0o755 });
    // -o -u 0: root's uid (see addLoginUser's comment); -M: the home is made above; -N -g 0: no group of its own.
    // -p '*': no password, yet not locked (sshd without PAM refuses a locked account, even by key).
    execFileSync('useradd', ['-o', '-u', '0', '-g', '0', '-N', '-M', '-p', '*', '-d', home, '-s', shell, name], {
      stdio: 'ignore',
    });
    users.push(name);
    // The AuthorizedKeysFile above is one absolute path, so the test key logs this account in too;
    // ~/.ssh/authorized_keys is written as well for a server configured the usual way.
    mkdirSync(path.join(home, '.ssh'), { mode: 0o700 });
    writeFileSync(path.join(home, '.ssh', 'authorized_keys'), readFileSync(path.join(dir, 'user_key.pub')));
    return { ...destination, user: name };
  };
  const removeUsers = () => {
    for (const name of users.splice(0)) {
      // -f: the uid is root's, which always has processes; without -r nothing but the passwd/shadow lines goes.
      try {
        execFileSync('userdel', ['-f', name], { stdio: 'ignore' });
      } catch {
        // Reported by the check below, which names the account.
      }
      const left = execFileSync('getent', ['passwd'], { encoding: 'utf8' })
        .split('\n')
        .some((l) => l.startsWith(`${name}:`));
      if (left) throw new Error(`could not remove the test account ${name}: userdel -f ${name}`);
    }
  };

  const controlDir = path.join(dir, 'ctl');
  mkdirSync(controlDir, { mode: 0o700 });
  const destination: SshDestination = {
    host: '127.0.0.1',
    user: userInfo().username,
    port,
    identityFile: path.join(dir, 'user_key'),
    options: { UserKnownHostsFile: path.join(dir, 'known_hosts'), StrictHostKeyChecking: 'accept-new' },
    // The machine's own ~/.ssh/config must not change what is tested.
    extraArgs: ['-F', '/dev/null'],
  };
  return {
    port,
    destination,
    controlDir,
    log: () => log,
    addLoginUser,
    async stop() {
      // The shared masters (ControlPersist) would otherwise outlive the test by 10 minutes.
      for (const user of [userInfo().username, ...users]) {
        await new Promise<void>((resolve) => {
          const c = spawn(
            'ssh',
            [
              ...['-F', '/dev/null', '-o', `ControlPath=${controlDir}/%C`, '-p', String(port), '-l', user],
              ...['-O', 'exit', '127.0.0.1'],
            ],
            { stdio: 'ignore' },
          );
          c.on('error', () => resolve());
          c.on('close', () => resolve());
        });
      }
      await stopProcess(child);
      try {
        removeUsers();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** Polls until sshd accepts a TCP connection; fails at once if sshd exits. */
async function waitForPort(port: number, child: ChildProcess, log: () => string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`sshd exited with ${child.exitCode ?? child.signalCode}:\n${log()}`);
    }
    if (await accepts(port)) return;
    if (Date.now() > deadline) throw new Error(`sshd did not accept on port ${port} within ${timeoutMs} ms:\n${log()}`);
    await sleep(25);
  }
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const closed = new Promise((resolve) => child.once('close', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await closed;
  clearTimeout(timer);
}
