// The argv for the system `ssh` client. We never implement SSH ourselves: the user's ssh already
// knows their keys, agent, ~/.ssh/config, ProxyJump and bastions (DESIGN.md, "How the extension
// reaches a run").
import { anyShellCommand, shellJoin } from './shellQuote';

/** Where to connect. `host` may be an alias from ~/.ssh/config; ssh resolves it. */
export interface SshDestination {
  host: string;
  user?: string;
  port?: number;
  identityFile?: string;
  /** Extra `-o Key=Value` options, e.g. `{ ProxyJump: 'bastion' }`. */
  options?: Readonly<Record<string, string>>;
  /** Extra ssh arguments passed as they are (e.g. `['-F', '/path/config']`). */
  extraArgs?: readonly string[];
}

export interface SshSettings {
  /** Folder for connection-sharing sockets (created by the caller, mode 0700). Unset: no sharing. */
  controlDir?: string;
  /** Shorter folder to use when `controlDir` would make the socket path too long. */
  shortControlDir?: string;
  /** Defaults to this process's platform. */
  platform?: NodeJS.Platform;
  connectTimeoutS?: number;
  serverAliveIntervalS?: number;
}

/**
 * A Unix socket path must fit in sun_path: 104 bytes on macOS, 108 on Linux. ssh replaces `%C`
 * with 40 hex digits and, while the master binds, appends `.` and 16 random characters.
 */
const SOCKET_PATH_MAX = 100;
const CONTROL_NAME_BYTES = '/'.length + 40 + '.'.length + 16;

/**
 * The ControlPath for `dir`, or for `shortDir` when `dir` is too long for a socket path
 * (VS Code's global storage folder often is); undefined when neither fits.
 */
export function controlPath(dir: string, shortDir?: string): string | undefined {
  for (const d of shortDir === undefined ? [dir] : [dir, shortDir]) {
    const base = d.replace(/\/+$/, '');
    if (Buffer.byteLength(base) + CONTROL_NAME_BYTES <= SOCKET_PATH_MAX) return `${base}/%C`;
  }
  return undefined;
}

/** ssh reads `-o` values like config lines: a value with spaces needs double quotes. */
function optionValue(v: string): string {
  return /\s/.test(v) ? `"${v}"` : v;
}

/** Connection sharing is possible: not on Windows (its OpenSSH has no ControlMaster). */
export function canShareConnections(platform: NodeJS.Platform = process.platform): boolean {
  return platform !== 'win32';
}

/** The options every non-interactive call uses, and connection sharing where it works. */
export function sshOptions(dest: SshDestination, settings: SshSettings = {}): string[] {
  const o = (k: string, v: string) => ['-o', `${k}=${optionValue(v)}`];
  const args = [
    // Never prompt: a password or one-time code is entered in a real terminal instead, and this
    // call then reuses that login's shared connection.
    ...o('BatchMode', 'yes'),
    ...o('ConnectTimeout', String(settings.connectTimeoutS ?? 15)),
    // A dead network is noticed in ~45 s instead of at the TCP timeout; the stream then reconnects.
    ...o('ServerAliveInterval', String(settings.serverAliveIntervalS ?? 15)),
    ...o('ServerAliveCountMax', '3'),
  ];
  const path =
    settings.controlDir === undefined ? undefined : controlPath(settings.controlDir, settings.shortControlDir);
  if (path !== undefined && canShareConnections(settings.platform)) {
    args.push(...o('ControlMaster', 'auto'), ...o('ControlPath', path), ...o('ControlPersist', '10m'));
  }
  if (dest.port !== undefined) args.push('-p', String(dest.port));
  // -l rather than user@host: a user name may itself contain '@'.
  if (dest.user !== undefined) args.push('-l', dest.user);
  if (dest.identityFile !== undefined) args.push('-i', dest.identityFile, ...o('IdentitiesOnly', 'yes'));
  for (const [k, v] of Object.entries(dest.options ?? {})) args.push(...o(k, v));
  args.push(...(dest.extraArgs ?? []));
  return args;
}

/**
 * The POSIX shell script run on the remote host: `argv` quoted once per element for sh, after the
 * set-up lines (the user's own, trusted shell text such as CANN's `source .../set_env.sh`, run by
 * bash where the host has it, else by sh), each joined with `&&` so that a failing set-up stops
 * the command.
 */
export function remoteCommand(argv: readonly string[], setup: readonly string[] = []): string {
  return [...setup.filter((s) => s.trim() !== ''), shellJoin(argv)].join(' && ');
}

/**
 * The full argv (after `ssh`) to run `argv` on `dest`; `--` ends ssh's options. The script goes
 * through `anyShellCommand`, so the remote login shell (fish, tcsh, ...) never parses it.
 */
export function sshArgv(
  dest: SshDestination,
  argv: readonly string[],
  opts: SshSettings & { setup?: readonly string[] } = {},
): string[] {
  return [...sshOptions(dest, opts), '--', dest.host, anyShellCommand(remoteCommand(argv, opts.setup))];
}
