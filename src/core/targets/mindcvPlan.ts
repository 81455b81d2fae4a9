// Install mindcv on Target, its decisions: the wheels the extension carries (runner/wheels/, sha256
// pinned here), what a target's Python says about itself (PROBE), and every argv the install runs
// on the target or on this machine. mindcvInstall.ts runs them. mindcv itself is installed as
// published: pinned, never patched.
import { english, WordedError, type Translate } from '../l10n';
import { shellJoin, shellQuote } from '../ssh/shellQuote';
import { sha256File } from './weightsCopy';
import * as path from 'node:path';

export interface CarriedWheel {
  file: string;
  project: string;
  version: string;
  sha256: string;
}

/** The two pure-Python wheels in runner/wheels/ (README, "Dependencies and why"). */
export const CARRIED_WHEELS: readonly CarriedWheel[] = [
  {
    file: 'mindcv-0.3.0-py3-none-any.whl',
    project: 'mindcv',
    version: '0.3.0',
    sha256: '18152d727d1fad52197aebe0faa3b5024fdaf05fc20c19ae2864ce19045c2ee1',
  },
  {
    file: 'tqdm-4.70.1-py3-none-any.whl',
    project: 'tqdm',
    version: '4.70.1',
    sha256: 'c293e525e6fef9c20e8728fd4612df02a0aa31bb5fe91ecd93e123b1b7bffa73',
  },
];

export const MINDCV_REQUIREMENTS: readonly string[] = CARRIED_WHEELS.map((w) => `${w.project}==${w.version}`);
/**
 * PyYAML has platform wheels, so it is not carried: CANN's Python requirements usually bring it.
 * A range, not a pin: pip takes the newest release with a wheel for the target's tags (6.0.4 has
 * none for CPython 3.9 on aarch64, a common Kunpeng box; 6.0.3 has). mindcv asks for >=5.3.
 */
export const PYYAML_REQUIREMENT = 'pyyaml>=6.0,<7';

/** The exact release of a downloaded PyYAML wheel (its file name), so the install takes that file. */
export function wheelRequirement(wheelFile: string): string {
  const m = /^pyyaml-(\d+(?:\.\d+)*)-/i.exec(path.basename(wheelFile));
  return m ? `pyyaml==${m[1]}` : PYYAML_REQUIREMENT;
}
/** Where the wheels go on an SSH target (relative paths are from the remote home). */
export const REMOTE_WHEELS_DIR = '.ascend-finetune/wheels';

/** A failure the user can act on; `commands` are the exact lines to run by hand, when there are any. */
export class MindcvInstallError extends WordedError {
  constructor(
    words: (t: Translate) => string,
    readonly commands: readonly string[] = [],
  ) {
    super(words);
    this.name = 'MindcvInstallError';
  }
}

/** Refuses a carried wheel whose bytes are not the pinned ones (a changed or broken extension install). */
export async function verifyCarriedWheels(dir: string): Promise<string[]> {
  const files: string[] = [];
  for (const w of CARRIED_WHEELS) {
    const file = path.join(dir, w.file);
    let got: string;
    try {
      got = await sha256File(file);
    } catch (e) {
      const why = (e as Error).message;
      throw new MindcvInstallError((t) => t('the carried wheel {0} cannot be read ({1})', file, why));
    }
    if (got !== w.sha256)
      throw new MindcvInstallError((t) =>
        t(
          'the carried wheel {0} has sha256 {1}, not the pinned {2}: it was refused (reinstall the extension)',
          w.file,
          got,
          w.sha256,
        ),
      );
    files.push(file);
  }
  return files;
}

/** What the target's Python says about itself: the tags `pip download` needs, and what it has. */
export interface TargetPython {
  executable: string;
  /** `3.11` */
  version: string;
  /** `cp` for CPython */
  implementation: string;
  /** `cp311` */
  abi: string;
  /** Wheel platform tags it accepts, most specific first, e.g. `manylinux_2_35_aarch64`. */
  platforms: string[];
  pip: string | null;
  pyyaml: string | null;
}

/** Read with pip's own vendored `packaging` (the tags pip itself would accept); no import of mindcv or yaml. */
export const PROBE = String.raw`
import json, sys, sysconfig
out = {"executable": sys.executable, "version": "%d.%d" % sys.version_info[:2],
       "implementation": "cp" if sys.implementation.name == "cpython" else sys.implementation.name,
       "abi": "cp%d%d" % sys.version_info[:2], "platforms": [], "pip": None, "pyyaml": None}
from importlib.metadata import version
for key in ("pip", "pyyaml"):
    try:
        out[key] = version(key)
    except Exception:
        pass
try:
    from pip._vendor.packaging import tags
    for t in tags.sys_tags():
        if t.platform != "any" and t.platform not in out["platforms"]:
            out["platforms"].append(t.platform)
except Exception:
    out["platforms"] = [sysconfig.get_platform().replace("-", "_").replace(".", "_")]
print(json.dumps(out))
`;

export function parseProbe(stdout: string): TargetPython {
  const last = stdout.trim().split('\n').pop() ?? '';
  let d: Record<string, unknown>;
  try {
    d = JSON.parse(last) as Record<string, unknown>;
  } catch {
    throw new MindcvInstallError((t) =>
      t("the target's Python answered something else than its description: {0}", last),
    );
  }
  const s = (k: string) => (typeof d[k] === 'string' ? (d[k] as string) : null);
  const version = s('version');
  if (!version || !/^\d+\.\d+$/.test(version))
    throw new MindcvInstallError((t) => t("the target's Python gave no version: {0}", last));
  return {
    executable: s('executable') ?? '',
    version,
    implementation: s('implementation') ?? 'cp',
    abi: s('abi') ?? `cp${version.replace('.', '')}`,
    platforms: Array.isArray(d.platforms) ? d.platforms.filter((p): p is string => typeof p === 'string') : [],
    pip: s('pip'),
    pyyaml: s('pyyaml'),
  };
}

const PIP = ['-m', 'pip', '--disable-pip-version-check'];

/** Installs from the given folders only: `--no-index`, so no network is ever tried. */
export function pipInstallArgv(
  python: string,
  findLinks: readonly string[],
  requirements: readonly string[],
): string[] {
  return [python, ...PIP, 'install', '--no-index', ...findLinks.flatMap((d) => ['--find-links', d]), ...requirements];
}

/** The target's own pip from its index (an online box): one short try, so an air-gapped box fails fast. */
export function pipOnlineArgv(python: string): string[] {
  return [python, ...PIP, 'install', '--retries', '1', '--timeout', '15', PYYAML_REQUIREMENT];
}

/**
 * The platform tags `pip download` is given: PyYAML publishes manylinux2014 (= manylinux_2_17) and
 * manylinux_2_28 wheels, so those of the target's tags, else all of them (a musl or macOS box).
 */
export function downloadPlatforms(platforms: readonly string[]): string[] {
  const usual = platforms.filter((p) => /^(manylinux2014|manylinux_2_17|manylinux_2_28)_/.test(p));
  return usual.length > 0 ? usual : [...platforms];
}

/** PyYAML's wheel for the target's platform, downloaded by a Python on this machine into `dest`. */
export function pipDownloadArgv(localPython: string, t: TargetPython, dest: string): string[] {
  return [
    localPython,
    ...PIP,
    'download',
    '--no-deps',
    '--only-binary=:all:',
    ...downloadPlatforms(t.platforms).flatMap((p) => ['--platform', p]),
    '--python-version',
    t.version,
    '--implementation',
    t.implementation,
    '--abi',
    t.abi,
    '--dest',
    dest,
    PYYAML_REQUIREMENT,
  ];
}

/**
 * The shell lines for doing it by hand, each argv quoted once: the last resort the error names,
 * shown to the user (and copied), so the `(on …)` notes are in the display language (`t`).
 */
export function manualCommands(
  python: string,
  target: TargetPython | undefined,
  where: { ssh?: string; wheelsDir: string; remoteDir: string },
  t: Translate = english,
): string[] {
  const onTarget = (argv: string[]) => (where.ssh ? `${t('(on {0})', where.ssh)} ` : '') + shellJoin(argv);
  const lines: string[] = [];
  if (target && target.pyyaml === null) {
    lines.push(`${t('(on a machine with internet)')} ${shellJoin(pipDownloadArgv('python3', target, 'pyyaml-wheel'))}`);
  }
  const yaml = target !== undefined && target.pyyaml === null;
  const files = CARRIED_WHEELS.map((w) => path.join(where.wheelsDir, w.file));
  if (where.ssh) {
    lines.push(shellJoin(['ssh', where.ssh, 'mkdir', '-p', where.remoteDir]));
    // the glob is left bare on purpose: this machine's shell expands it
    lines.push(
      `${shellJoin(['scp', ...files])}${yaml ? ' pyyaml-wheel/*.whl' : ''} ${shellQuote(`${where.ssh}:${where.remoteDir}/`)}`,
    );
  }
  const reqs = [...MINDCV_REQUIREMENTS, ...(yaml ? [PYYAML_REQUIREMENT] : [])];
  const dirs = where.ssh ? [where.remoteDir] : [where.wheelsDir, ...(yaml ? ['pyyaml-wheel'] : [])];
  lines.push(onTarget(pipInstallArgv(python, dirs, reqs)));
  return lines;
}
