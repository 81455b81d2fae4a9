// A code-server window that reaches the loopback sshd through aliases in ~/.ssh/config of the
// window's HOME (the file the extension lists hosts from).
//
// ssh reads ~/.ssh/config from the passwd home, not $HOME, so a two-line `ssh` first on the window's
// PATH (via the temporary HOME's ~/.profile: VS Code's server takes the extension host's PATH from a
// login shell) points the real ssh at that HOME's file.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { SshDestination } from '../../src/core/ssh/ssh';

export interface SshHost {
  alias: string;
  /** Default: the sshd's own address. */
  hostName?: string;
}

/** The suite options that give the window those aliases: its PATH and a HOME preparer. */
export function sshWindow(
  sideDir: string,
  dest: SshDestination,
  hosts: readonly SshHost[],
): { env: { PATH: string }; prepareHome: (home: string) => void } {
  const bin = path.join(sideDir, 'bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(path.join(bin, 'ssh'), '#!/bin/sh\nexec /usr/bin/ssh -F "$HOME/.ssh/config" "$@"\n');
  chmodSync(path.join(bin, 'ssh'), 0o755);
  const options = Object.entries(dest.options ?? {}).map(([k, v]) => `  ${k} ${v}`);
  const block = (h: SshHost) => [
    `Host ${h.alias}`,
    `  HostName ${h.hostName ?? dest.host}`,
    `  Port ${dest.port}`,
    `  User ${dest.user}`,
    `  IdentityFile ${dest.identityFile}`,
    '  IdentitiesOnly yes',
    ...options,
  ];
  return {
    env: { PATH: `${bin}:${process.env.PATH}` },
    prepareHome: (home) => {
      writeFileSync(path.join(home, '.profile'), `PATH="${bin}:$PATH"\nexport PATH\n`);
      const sshDir = path.join(home, '.ssh');
      mkdirSync(sshDir, { recursive: true, mode: 0o700 });
      writeFileSync(path.join(sshDir, 'config'), [...hosts.flatMap(block), ''].join('\n'));
    },
  };
}

/**
 * Ends the connection-sharing masters the extension opened to these aliases (ControlPersist keeps
 * them 10 minutes, and sshd's connection processes with them). Its sockets are in its global
 * storage, or in /tmp/aft-ssh-<uid> when that path is too long for a socket (src/core/ssh/ssh.ts).
 */
export function exitSshMasters(home: string, tempDir: string, aliases: readonly string[]): void {
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  const dirs = [
    path.join(tempDir, 'data', 'User', 'globalStorage', 'ascend-finetune.ascend-finetune', 'ssh'),
    path.join(tmpdir(), `aft-ssh-${uid}`),
  ];
  for (const dir of dirs) {
    for (const alias of aliases) {
      // %C names this alias's host, port and user only: other sessions' sockets in the folder are untouched.
      spawnSync(
        '/usr/bin/ssh',
        ['-F', path.join(home, '.ssh', 'config'), '-o', `ControlPath=${dir}/%C`, '-O', 'exit', alias],
        { stdio: 'ignore', timeout: 15_000 },
      );
    }
  }
}
