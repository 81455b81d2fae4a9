// Where runner commands run: this machine, or an SSH host through the system `ssh`. Both give
// back a child process whose stdout is the runner's stdout, so `runRunner` and `followRun` do not
// care which (DESIGN.md: "Transport is the process pipe").
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { lstatSync, mkdirSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { invocation, type RunnerConfig } from './invocation';
import { shellQuote } from '../ssh/shellQuote';
import {
  canShareConnections,
  controlPath,
  sshArgv,
  sshOptions,
  type SshDestination,
  type SshSettings,
} from '../ssh/ssh';

export type RunnerProcess = ChildProcessByStdio<null, Readable, Readable>;

export interface SpawnOptions {
  /** Working folder of the local process (for ssh: of the ssh client, not the remote command). */
  cwd?: string;
  signal?: AbortSignal;
  /** Kills the process (for ssh: the client, which ends the remote command's session). */
  timeoutMs?: number;
}

export interface Target {
  /** For messages, e.g. `this machine` or `ssh gpu-box`. */
  readonly label: string;
  /** The program spawned, named in "could not run" errors. */
  readonly program: string;
  /** Starts `python -m ascend_finetune <args>` with stdin closed and stdout/stderr piped. */
  spawnRunner(args: readonly string[], opts?: SpawnOptions): RunnerProcess;
}

/** Runs the runner on this machine; argv goes straight to the process, no shell. */
export function localTarget(runner: RunnerConfig): Target {
  return {
    label: 'this machine',
    program: runner.python,
    spawnRunner(args, opts = {}) {
      const inv = invocation(runner, args);
      return spawn(inv.file, inv.args, {
        env: inv.env,
        cwd: opts.cwd,
        signal: opts.signal,
        timeout: opts.timeoutMs,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    },
  };
}

/** Callers may still pass a plain RunnerConfig: it means this machine. */
export function asTarget(runner: RunnerConfig | Target): Target {
  return 'spawnRunner' in runner ? runner : localTarget(runner);
}

/** The runner on the remote machine, as settings give it. */
export interface RemoteRunner {
  /** The remote Python with MindSpore. */
  python: string;
  /** The remote runner folder, prepended to PYTHONPATH. Relative paths are from the remote home. */
  runnerDir?: string;
  /** Shell lines run first, e.g. `source /usr/local/Ascend/ascend-toolkit/set_env.sh` (the user's own). */
  setup?: readonly string[];
  /** Arguments before the subcommand; `-m ascend_finetune` unless a test swaps the runner. */
  launcher?: readonly string[];
}

export interface SshTargetOptions extends SshSettings {
  /** Where `ssh` is; `ssh` on PATH by default. */
  sshPath?: string;
}

/**
 * The remote set-up: the user's lines, then our environment. PYTHONPATH is prepended to rather
 * than replaced because CANN's set_env.sh puts its own packages there. `${PYTHONPATH:+...}` is
 * the one place the remote shell expands anything, and it only reads that variable.
 */
export function remoteSetup(runner: RemoteRunner): string[] {
  const env = ['PYTHONUNBUFFERED=1']; // Python block-buffers a pipe; events must arrive as written.
  if (runner.runnerDir) env.push(`PYTHONPATH=${shellQuote(runner.runnerDir)}\${PYTHONPATH:+:$PYTHONPATH}`);
  return [...(runner.setup ?? []), `export ${env.join(' ')}`];
}

export interface SshTarget extends Target {
  /** The full `ssh` argv (after the program) for one runner command: for logs and tests. */
  argv(args: readonly string[]): string[];
  /** Ends the shared master connection, if any (`ssh -O exit`); resolves either way. */
  closeShared(): Promise<void>;
}

/**
 * Runs the runner over ssh. The connection-sharing folder is created 0700 if needed; if it is not
 * ours alone (another user could then hijack the socket), sharing is turned off instead.
 */
export function sshTarget(dest: SshDestination, runner: RemoteRunner, opts: SshTargetOptions = {}): SshTarget {
  const program = opts.sshPath ?? 'ssh';
  const settings: SshSettings = { ...opts, controlDir: sharedDir(opts), shortControlDir: undefined };
  const setup = remoteSetup(runner);
  const argv = (args: readonly string[]) =>
    sshArgv(dest, [runner.python, ...(runner.launcher ?? ['-m', 'ascend_finetune']), ...args], { ...settings, setup });
  return {
    label: `ssh ${dest.host}`,
    program,
    argv,
    spawnRunner(args, spawnOpts = {}) {
      return spawn(program, argv(args), {
        cwd: spawnOpts.cwd,
        signal: spawnOpts.signal,
        timeout: spawnOpts.timeoutMs,
        // stdin is closed: ssh then sends EOF to the remote command, which never reads it.
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    },
    closeShared() {
      if (settings.controlDir === undefined) return Promise.resolve();
      // -O exit finds the master through the same ControlPath.
      return new Promise((resolve) => {
        const child = spawn(program, ['-O', 'exit', ...sshOptions(dest, settings), '--', dest.host], {
          stdio: 'ignore',
        });
        child.on('error', () => resolve());
        child.on('close', () => resolve());
      });
    },
  };
}

/** The one folder the sockets will go in, if sharing is possible and that folder is private. */
function sharedDir(opts: SshSettings): string | undefined {
  if (opts.controlDir === undefined || !canShareConnections(opts.platform)) return undefined;
  const socket = controlPath(opts.controlDir, opts.shortControlDir);
  const dir = socket === undefined ? undefined : socket.slice(0, -'/%C'.length);
  return dir !== undefined && privateDir(dir) ? dir : undefined;
}

/** Creates `dir` 0700 if missing; true when it is a real folder that only we can use. */
export function privateDir(dir: string): boolean {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const st = lstatSync(dir);
    const mine = typeof process.getuid !== 'function' || st.uid === process.getuid();
    return st.isDirectory() && mine && (st.mode & 0o077) === 0;
  } catch {
    return false;
  }
}
