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
    async stop() {
      // The shared master (ControlPersist) would otherwise outlive the test by 10 minutes.
      await new Promise<void>((resolve) => {
        const c = spawn(
          'ssh',
          ['-F', '/dev/null', '-o', `ControlPath=${controlDir}/%C`, '-p', String(port), '-O', 'exit', '127.0.0.1'],
          { stdio: 'ignore' },
        );
        c.on('error', () => resolve());
        c.on('close', () => resolve());
      });
      await stopProcess(child);
      rmSync(dir, { recursive: true, force: true });
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
