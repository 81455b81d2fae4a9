// The targets the extension offers: "this machine" and SSH hosts (from ~/.ssh/config and from
// settings), how each one's runner is started, and what the runner's `doctor` says about it, as
// rows a tree can show. No vscode here: settings arrive as plain values. About 500 lines: the row
// model and its doctor hints are one decision (what a target row says and offers).
import * as path from 'node:path';
import type { RunnerConfig } from './invocation';
import { english, joined, type Translate } from '../l10n';
import type { SshDestination } from '../ssh/ssh';
import type { SshHostEntry } from '../ssh/config';
import { localTarget, sshTarget, type RemoteRunner, type Target } from './target';

export const LOCAL_TARGET_ID = 'local';

/** An SSH target as the `ascendFinetune.sshTargets` setting lists it. */
export interface SshTargetSetting {
  /** An alias from ~/.ssh/config, or a host name. */
  host: string;
  user?: string;
  port?: number;
  identityFile?: string;
  /** The remote Python with MindSpore. */
  python?: string;
  /** The remote runner folder (prepended to PYTHONPATH); relative to the remote home. */
  runnerDir?: string;
  /** A shell line run first, e.g. `source /usr/local/Ascend/ascend-toolkit/set_env.sh`. */
  setup?: string;
  /** Where runs go on that host; relative to the remote home. */
  runsRoot?: string;
}

/** What a remote target uses when its own setting says nothing. */
export interface RemoteDefaults {
  python: string;
  runnerDir?: string;
  /**
   * Where the extension copies its own runner on a host whose runner folder is not set, e.g.
   * `.ascend-finetune/runner/0.1.0` (relative to the remote home). Unset: no copying.
   */
  deployRunnerDir?: string;
  setup?: string;
  runsRoot: string;
}

export interface TargetDef {
  /** `local`, or `ssh:<host>`: the key of runs in the run index. */
  id: string;
  kind: 'local' | 'ssh';
  label: string;
  /** Where it came from: only `settings` targets can be removed from the Targets view. */
  source: 'local' | 'settings' | 'sshConfig';
  /** Shown beside the label: this machine's host name, or where an SSH host came from. */
  description: string;
  /** Where `launch` puts runs and `ls` looks, as a path on the target. */
  runsRoot: string;
  /**
   * The name other machines reach it by, for `device.nodes` of a multi-node run (msrun resolves the
   * master's with getaddrinfo, so an ssh alias will not do): the HostName ~/.ssh/config gives the
   * alias, else the host as written; this machine's host name for `local`. See `nodeAddress`.
   */
  address?: string;
  /** For kind `local`. */
  local?: RunnerConfig;
  /** For kind `ssh`. `deploy`: the runner folder is the extension's copy (deploy.ts keeps it current). */
  ssh?: { dest: SshDestination; runner: RemoteRunner; deploy: boolean };
}

/** The name a multi-node spec's `device.nodes` gives this target. */
export function nodeAddress(def: TargetDef): string {
  return def.address ?? def.ssh?.dest.host ?? def.label;
}

/** `~` and `~/x` from `home`; other paths as they are. */
export function expandHome(p: string, home: string): string {
  if (p === '~') return home;
  if (p.startsWith('~/')) return path.join(home, p.slice(2));
  return p;
}

/**
 * The local Python: the setting if set; else the extension checkout's own `.venv` (a development
 * install has MindSpore there) if it exists; else `python3` on PATH.
 */
export function localPython(
  setting: string | undefined,
  extensionRoot: string,
  home: string,
  exists: (p: string) => boolean,
): string {
  if (setting && setting.trim() !== '') return expandHome(setting.trim(), home);
  const venv = path.join(extensionRoot, '.venv', 'bin', 'python');
  return exists(venv) ? venv : 'python3';
}

export interface TargetInputs {
  /** The runner for this machine (python and the extension's `runner/` folder). */
  localRunner: RunnerConfig;
  localRunsRoot: string;
  /** This machine's host name: in a Remote-SSH window, the remote box's. */
  hostname: string;
  sshConfigHosts: readonly SshHostEntry[];
  sshSettings: readonly SshTargetSetting[];
  remoteDefaults: RemoteDefaults;
  /** Words for the local target's label (the glue passes vscode.l10n.t). */
  t?: Translate;
}

/** "This machine" first, then settings' hosts in their order, then the other ~/.ssh/config hosts by name. */
export function buildTargets(inputs: TargetInputs): TargetDef[] {
  const t = inputs.t ?? english;
  const targets: TargetDef[] = [
    {
      id: LOCAL_TARGET_ID,
      kind: 'local',
      label: t('This machine'),
      source: 'local',
      description: inputs.hostname,
      runsRoot: inputs.localRunsRoot,
      address: inputs.hostname,
      local: inputs.localRunner,
    },
  ];
  const seen = new Set<string>();
  const fromConfig = new Map(inputs.sshConfigHosts.map((h) => [h.alias, h]));
  for (const s of inputs.sshSettings) {
    const host = s.host?.trim();
    if (!host || seen.has(host)) continue;
    seen.add(host);
    targets.push(
      sshDef(
        host,
        s,
        inputs.remoteDefaults,
        'settings',
        fromConfig.has(host) ? 'settings, ~/.ssh/config' : 'settings',
        fromConfig.get(host)?.hostName,
      ),
    );
  }
  for (const h of [...inputs.sshConfigHosts].sort((a, b) => a.alias.localeCompare(b.alias))) {
    if (seen.has(h.alias)) continue;
    seen.add(h.alias);
    targets.push(
      sshDef(
        h.alias,
        {},
        inputs.remoteDefaults,
        'sshConfig',
        h.hostName ? `~/.ssh/config → ${h.hostName}` : '~/.ssh/config',
        h.hostName,
      ),
    );
  }
  return targets;
}

function sshDef(
  host: string,
  s: Omit<SshTargetSetting, 'host'>,
  d: RemoteDefaults,
  source: TargetDef['source'],
  from: string,
  hostName?: string,
): TargetDef {
  // Only what the setting gives: an alias's own User/Port/IdentityFile are applied by ssh itself.
  const dest: SshDestination = { host };
  if (s.user) dest.user = s.user;
  if (s.port !== undefined) dest.port = s.port;
  if (s.identityFile) dest.identityFile = s.identityFile;
  const setup = s.setup ?? d.setup;
  const ownRunner = s.runnerDir || d.runnerDir;
  const runner: RemoteRunner = {
    python: s.python || d.python,
    runnerDir: ownRunner || d.deployRunnerDir,
    setup: setup && setup.trim() !== '' ? [setup] : [],
  };
  const deploy = !ownRunner && d.deployRunnerDir !== undefined;
  const runsRoot = remotePath(s.runsRoot || d.runsRoot);
  // `%h` in a HostName is the alias itself (ssh_config(5)); other tokens are left to ssh.
  const address = hostName ? hostName.replace(/%h/g, host) : host;
  return {
    id: `ssh:${host}`,
    kind: 'ssh',
    label: host,
    source,
    description: from,
    runsRoot,
    address,
    ssh: { dest, runner, deploy },
  };
}

/**
 * A remote path as argv can carry it: no shell expands `~` there, and remote commands start in the
 * home folder, so `~/x` becomes `x` and `~` becomes `.`.
 */
export function remotePath(p: string): string {
  if (p === '~') return '.';
  return p.startsWith('~/') ? p.slice(2) || '.' : p;
}

/**
 * Targets whose runs are listed on activation and Refresh: this machine, the ones from settings,
 * and any that already has runs in the index. Other ~/.ssh/config hosts (a git server, say) are
 * never contacted until the user picks them.
 */
export function targetsToList(targets: readonly TargetDef[], indexedTargetIds: Iterable<string>): TargetDef[] {
  const indexed = new Set(indexedTargetIds);
  return targets.filter((t) => t.source !== 'sshConfig' || indexed.has(t.id));
}

export interface TargetOptions {
  /** Private folder for ssh connection-sharing sockets (the extension's storage). */
  controlDir?: string;
  /** A shorter folder for when `controlDir` makes the socket path too long. */
  shortControlDir?: string;
  /** Replaces `-m ascend_finetune` (e.g. `['-c', code]` for a small helper on the target). */
  launcher?: readonly string[];
  /** The ssh program; `ssh` on PATH by default (tests pass a stand-in). */
  sshPath?: string;
}

/** The transport for a target: runner commands go through it as argv, never as shell text. */
export function makeTarget(def: TargetDef, opts: TargetOptions = {}): Target {
  if (def.kind === 'local' && def.local) {
    return localTarget(opts.launcher ? { ...def.local, launcher: opts.launcher } : def.local);
  }
  if (def.kind === 'ssh' && def.ssh) {
    const runner = opts.launcher ? { ...def.ssh.runner, launcher: opts.launcher } : def.ssh.runner;
    return sshTarget(def.ssh.dest, runner, {
      controlDir: opts.controlDir,
      shortControlDir: opts.shortControlDir,
      sshPath: opts.sshPath,
    });
  }
  throw new Error(`target ${def.id} has no ${def.kind} settings`);
}

/** One line under a checked target. `problem` rows are shown with an error icon and their fix. */
export interface DoctorRow {
  label: string;
  description: string;
  problem: boolean;
  fix?: string;
  /** An NPU that npu-smi lists processes on (another job may be using it). */
  busy?: boolean;
  /** Not a problem, but its fix is offered as a clickable hint (mindcv: only some backbones need it). */
  suggest?: boolean;
}

interface DoctorOutput {
  python?: { version?: string; executable?: string; ok?: boolean };
  mindspore?: { ok?: boolean; version?: string; backends?: Record<string, boolean>; error?: string; fix?: string };
  cann?: { found?: boolean; home?: string | null; set_env?: string | null; env_loaded?: boolean };
  mindcv?: { ok?: boolean; version?: string | null; packages?: Record<string, string | null> };
  npu?: { npu_smi?: string | null; devices?: unknown[]; processes?: unknown[]; error?: string };
  host?: string;
  cpu_count?: number;
}

/**
 * `doctor`'s JSON as rows: Python, MindSpore, CANN, then one row per NPU. Labels are names; the
 * descriptions and fixes the extension words are in `t`'s language, text the runner sends as is.
 */
export function doctorRows(output: unknown, t: Translate = english): DoctorRow[] {
  const d = (typeof output === 'object' && output !== null ? output : {}) as DoctorOutput;
  const rows: DoctorRow[] = [];
  const py = d.python;
  rows.push({
    label: 'Python',
    description: py ? `${py.version ?? '?'} (${py.executable ?? '?'})` : t('not reported'),
    problem: py?.ok === false,
    fix: py?.ok === false ? t("use Python 3.9 to 3.11 with MindSpore: set the target's Python path") : undefined,
  });
  const ms = d.mindspore;
  if (ms?.ok) {
    const backends = Object.entries(ms.backends ?? {})
      .filter(([, on]) => on)
      .map(([b]) => b);
    rows.push({
      label: 'MindSpore',
      description: `${ms.version ?? '?'}${backends.length ? ` · ${joined(backends, t)}` : ''}`,
      problem: false,
    });
  } else {
    rows.push({
      label: 'MindSpore',
      description: ms?.error ?? t('not found'),
      problem: true,
      fix: ms?.fix ?? t("pip install mindspore into the target's Python"),
    });
  }
  const cann = d.cann;
  rows.push({
    label: 'CANN',
    description: cann?.found
      ? cann.env_loaded
        ? (cann.home ?? t('found'))
        : t('{0} (environment not loaded)', cann.home ?? t('found'))
      : t('not found (CPU only)'),
    problem: false,
    fix:
      cann?.found && !cann.env_loaded && cann.set_env
        ? t('add "source {0}" as the target\'s set-up line', cann.set_env)
        : undefined,
  });
  if (d.mindcv) rows.push(mindcvRow(d.mindcv, t));
  const devices = d.npu?.devices ?? [];
  if (d.npu?.error)
    rows.push({
      label: 'NPU',
      description: d.npu.error,
      problem: true,
      fix: t('check npu-smi and the driver on the target'),
    });
  else if (devices.length === 0)
    rows.push({
      label: 'NPU',
      description: d.npu?.npu_smi ? t('none listed by npu-smi') : t('no npu-smi (no NPU)'),
      problem: false,
    });
  // 310P Duo and Atlas A3 cards list one device per chip under the same NPU id
  const ids = devices.map((dev) => (dev as { id?: unknown })?.id);
  const multiChip = new Set(ids).size < ids.length;
  const procs = Array.isArray(d.npu?.processes) ? d.npu.processes : [];
  devices.forEach((dev, i) => rows.push(npuRow(dev, i, multiChip, procs, t)));
  if (d.host !== undefined || d.cpu_count !== undefined) {
    rows.push({
      label: 'Host',
      description: d.cpu_count ? t('{0} · {1} CPUs', d.host ?? '?', d.cpu_count) : (d.host ?? '?'),
      problem: false,
    });
  }
  return rows;
}

/** mindcv, PyYAML, tqdm: only mindcv backbones need them, so missing is a hint, not a problem. */
function mindcvRow(m: NonNullable<DoctorOutput['mindcv']>, t: Translate): DoctorRow {
  if (m.ok) return { label: 'mindcv', description: t('{0} (for mindcv backbones)', m.version ?? '?'), problem: false };
  const wrong = Object.entries(m.packages ?? {})
    .filter(([name, v]) => v === null || (name === 'mindcv' && v !== '0.3.0'))
    .map(([name, v]) => (v === null ? t('{0} missing', name) : t('{0} {1}, not 0.3.0', name, v)));
  return {
    label: 'mindcv',
    description: t('{0} (only mindcv backbones need it)', joined(wrong, t) || t('not usable')),
    problem: false,
    suggest: true,
    fix: t('Install mindcv on Target (the wheels the extension carries; no internet needed)'),
  };
}

interface NpuProcess {
  npu?: unknown;
  chip?: unknown;
  pid?: unknown;
  name?: unknown;
  memory_mb?: unknown;
}

/** The processes npu-smi lists on this NPU (and chip, where the card has several), as text. */
function processText(
  procs: unknown[],
  id: number,
  chip: number | undefined,
  multiChip: boolean,
  t: Translate,
): string | undefined {
  const mine = procs.filter((p): p is NpuProcess => {
    const q = (typeof p === 'object' && p !== null ? p : {}) as NpuProcess;
    return q.npu === id && (!multiChip || chip === undefined || q.chip === null || q.chip === chip);
  });
  if (mine.length === 0) return undefined;
  const one = (p: NpuProcess) => {
    const mem = typeof p.memory_mb === 'number' ? ` ${t('{0} GiB', (p.memory_mb / 1024).toFixed(1))}` : '';
    return `${typeof p.name === 'string' ? p.name : '?'} (pid ${typeof p.pid === 'number' ? p.pid : '?'}${mem})`;
  };
  const shown = joined(mine.slice(0, 3).map(one), t);
  return mine.length > 3 ? t('busy: {0} +{1} more', shown, mine.length - 3) : t('busy: {0}', shown);
}

function npuRow(dev: unknown, i: number, multiChip = false, procs: unknown[] = [], t: Translate = english): DoctorRow {
  const o = (typeof dev === 'object' && dev !== null ? dev : {}) as Record<string, unknown>;
  const num = (k: string) => (typeof o[k] === 'number' ? (o[k] as number) : undefined);
  const id = num('id') ?? i;
  const chip = num('chip');
  const model = typeof o.name === 'string' ? o.name : typeof o.model === 'string' ? o.model : 'NPU';
  const parts = [model];
  // 910-class cards report HBM; 310P cards only their DDR "Memory"
  const [kind, used, total] = num('hbm_total_mb')
    ? ['HBM', num('hbm_used_mb'), num('hbm_total_mb')]
    : [t('memory'), num('memory_used_mb'), num('memory_total_mb')];
  if (used !== undefined && total)
    parts.push(t('{0} {1}/{2} GiB', kind, (used / 1024).toFixed(1), (total / 1024).toFixed(1)));
  const util = num('util');
  if (util !== undefined) parts.push(t('{0}% AI Core', util));
  const busy = processText(procs, id, chip, multiChip, t);
  if (busy) parts.push(busy);
  return {
    label: multiChip && chip !== undefined ? t('NPU {0} chip {1}', id, chip) : t('NPU {0}', id),
    description: parts.join(' · '),
    problem: false,
    busy: busy !== undefined,
  };
}

export interface NpuChoice {
  /** MindSpore's logical device id (what `device.ids` takes): the chip's Device number on a 310P,
   * its Phy-ID on an Atlas A3, the NPU id otherwise; as the runner's telemetry maps them. */
  id: number;
  label: string;
  description: string;
  busy: boolean;
}

/** The devices `doctor` lists, for the wizard's NPU step: busy ones (processes on them) marked. */
export function npuChoices(output: unknown, t: Translate = english): NpuChoice[] {
  const d = (typeof output === 'object' && output !== null ? output : {}) as DoctorOutput;
  const devices = Array.isArray(d.npu?.devices) ? d.npu.devices : [];
  const procs = Array.isArray(d.npu?.processes) ? d.npu.processes : [];
  const ids = devices.map((dev) => (dev as { id?: unknown })?.id);
  const multiChip = new Set(ids).size < ids.length;
  const out: NpuChoice[] = [];
  devices.forEach((dev, i) => {
    const o = (typeof dev === 'object' && dev !== null ? dev : {}) as Record<string, unknown>;
    const int = (k: string) => (typeof o[k] === 'number' && Number.isInteger(o[k]) ? (o[k] as number) : undefined);
    const logical = int('device_id') ?? int('phy_id') ?? int('id') ?? i;
    const row = npuRow(dev, i, multiChip, procs, t);
    out.push({
      id: logical,
      label: t('device {0}', logical),
      description: `${row.label} · ${row.description}`,
      busy: row.busy === true,
    });
  });
  return out;
}

/**
 * Why `doctor` itself could not run, as one problem row with its fix: a Python that does not
 * start, a runner that is not on the target, an SSH login that needs a terminal.
 */
export function doctorFailureRow(
  target: TargetDef,
  err: { message: string; exitCode: number | null; stderrTail?: string },
  t: Translate = english,
): DoctorRow {
  const text = `${err.message}\n${err.stderrTail ?? ''}`;
  const where =
    target.kind === 'local'
      ? 'ascendFinetune.pythonPath'
      : t('the python of "{0}" in ascendFinetune.sshTargets', target.label);
  if (/No module named ascend_finetune/.test(text)) {
    return {
      label: 'Runner',
      description: t('ascend_finetune is not installed there'),
      problem: true,
      fix:
        target.kind === 'local'
          ? t('reinstall the extension')
          : t('copy the runner to the host and set its runnerDir in ascendFinetune.sshTargets'),
    };
  }
  if (
    target.kind === 'ssh' &&
    (err.exitCode === 255 ||
      /Permission denied|Host key verification failed|Could not resolve hostname|Connection refused|timed out/i.test(
        text,
      ))
  ) {
    return {
      label: 'SSH',
      description: lastLine(text),
      problem: true,
      fix: t('log in once (Log In to SSH Target: password, one-time code or host key), then check again'),
    };
  }
  if (err.exitCode === null || err.exitCode === 127 || /not found|ENOENT/.test(text)) {
    return {
      label: 'Python',
      description: t('not found'),
      problem: true,
      fix: t('set {0} to a Python with MindSpore', where),
    };
  }
  return {
    label: 'Doctor',
    description: lastLine(text),
    problem: true,
    fix: t('see the Ascend Fine-Tune output channel'),
  };
}

function lastLine(text: string): string {
  const lines = text
    .trim()
    .split('\n')
    .filter((l) => l.trim() !== '');
  return lines[lines.length - 1] ?? text;
}
