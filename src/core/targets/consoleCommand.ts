// Terminal commands for a target, as a program and argv: the run's console (`tail -F
// console.log`, here or over ssh) and an interactive ssh login that starts the shared connection
// later batch-mode calls reuse. Remote commands are quoted once by the ssh layer.
import * as path from 'node:path';
import { anyShellCommand, shellJoin } from '../ssh/shellQuote';
import { controlPath, sshArgv, sshOptions } from '../ssh/ssh';
import { privateDir } from './target';
import type { TargetDef } from './model';

export interface Command {
  file: string;
  args: string[];
}

/** The socket folders of the extension (as `sshTarget` gets them). */
export interface SshFolders {
  controlDir?: string;
  shortControlDir?: string;
}

/**
 * The folder the shared-connection sockets are in, chosen as `sshTarget` chooses it (the short
 * one when the long path would not fit a socket), if it is private; else undefined (no sharing).
 */
export function socketDir(f: SshFolders): string | undefined {
  if (f.controlDir === undefined) return undefined;
  const socket = controlPath(f.controlDir, f.shortControlDir);
  const dir = socket?.slice(0, -'/%C'.length);
  return dir !== undefined && privateDir(dir) ? dir : undefined;
}

/** The console file of a run directory (POSIX on a remote host). */
export function consoleFile(def: TargetDef, runDir: string): string {
  return def.kind === 'local' ? path.join(runDir, 'console.log') : path.posix.join(runDir, 'console.log');
}

/** `tail -n +1 -F <runDir>/console.log` there; `tty` asks ssh for a terminal (Ctrl+C then ends the remote tail). */
export function tailCommand(
  def: TargetDef,
  runDir: string,
  opts: SshFolders & { tty: boolean; sshPath?: string },
): Command {
  const tail = ['tail', '-n', '+1', '-F', consoleFile(def, runDir)];
  if (def.kind === 'local') return { file: tail[0], args: tail.slice(1) };
  if (!def.ssh) throw new Error(`target ${def.id} has no ssh settings`);
  const args = sshArgv(def.ssh.dest, tail, { controlDir: socketDir(opts) });
  return { file: opts.sshPath ?? 'ssh', args: opts.tty ? ['-t', ...args] : args };
}

/**
 * An interactive login for a host that needs a password, a one-time code or a host-key answer:
 * ssh takes the first value of each option, so these come before the batch-mode defaults. It
 * becomes the shared master (kept 10 minutes after its last use), which later calls reuse.
 */
export function loginCommand(def: TargetDef, opts: SshFolders & { sshPath?: string }): Command {
  if (def.kind !== 'ssh' || !def.ssh) throw new Error(`${def.label} is not an SSH target`);
  const dir = socketDir(opts);
  const first = ['-o', 'BatchMode=no', ...(dir === undefined ? [] : ['-o', 'ControlMaster=auto'])];
  const rest = sshOptions(def.ssh.dest, { controlDir: dir });
  const message = `Logged in to ${def.label}. Ascend Fine-Tune reuses this connection; you can close this terminal.`;
  return {
    file: opts.sshPath ?? 'ssh',
    args: [...first, ...rest, '--', def.ssh.dest.host, anyShellCommand(shellJoin(['echo', message]))],
  };
}
