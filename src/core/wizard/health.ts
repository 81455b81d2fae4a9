// What a target's `doctor` report (or its failure) means for someone about to start a run: can it
// train, and if not, one sentence that says why and what to do. The Start wizard shows this before
// its first question; the Targets view's hint rows use `fixCommand` to do what they say.
import type { CommandId } from '../../shared/commands';
import { isMindcvBackbone } from '../spec/builder';
import type { DoctorRow } from '../targets/model';
import { english, type Translate } from '../l10n';

export type HealthProblem = 'python' | 'mindspore' | 'runner' | 'ssh' | 'doctor';

export type Health =
  | { ok: true; cpuOnly: boolean; cpuCount?: number; npus: number; mindspore?: string }
  | {
      ok: false;
      problem: HealthProblem;
      /** One whole sentence (or two) for the wizard's first screen. */
      sentence: string;
      /** The Python that was asked, when known. */
      python?: string;
    };

interface DoctorLike {
  python?: { version?: unknown; executable?: unknown; ok?: unknown };
  mindspore?: { ok?: unknown; version?: unknown; backends?: unknown; error?: unknown };
  npu?: { devices?: unknown };
  cpu_count?: unknown;
}

function str(x: unknown): string | undefined {
  return typeof x === 'string' && x.trim() !== '' ? x : undefined;
}

/**
 * The state of a target from `doctor`'s JSON (`output`), or from the row that says why doctor did
 * not run; the sentence in `t`'s language (the runner's own error text inside it as sent).
 */
export function healthOf(output: unknown, failure?: DoctorRow, python?: string, t: Translate = english): Health {
  if (failure) return failureHealth(failure, python, t);
  const d = (typeof output === 'object' && output !== null ? output : {}) as DoctorLike;
  const exe = str(d.python?.executable) ?? python;
  if (d.python?.ok === false) {
    return {
      ok: false,
      problem: 'python',
      python: exe,
      sentence: t(
        'The Python at {0} is {1} that MindSpore 2.10 does not support: point Ascend Fine-Tune at a Python 3.9 to 3.11 with MindSpore.',
        exe ?? '?',
        str(d.python?.version) ?? t('a version'),
      ),
    };
  }
  if (d.mindspore?.ok !== true) {
    const why = str(d.mindspore?.error) ?? t('MindSpore is not installed');
    return {
      ok: false,
      problem: 'mindspore',
      python: exe,
      sentence: t(
        'The Python at {0} cannot import MindSpore ({1}), so no run can start there: choose a Python that has MindSpore, or create one.',
        exe ?? '?',
        oneLine(why),
      ),
    };
  }
  const backends = (
    typeof d.mindspore.backends === 'object' && d.mindspore.backends !== null ? d.mindspore.backends : {}
  ) as Record<string, unknown>;
  const devices = Array.isArray(d.npu?.devices) ? d.npu.devices.length : 0;
  const cpuCount = typeof d.cpu_count === 'number' && d.cpu_count > 0 ? d.cpu_count : undefined;
  return {
    ok: true,
    cpuOnly: backends.Ascend !== true,
    cpuCount,
    npus: devices,
    mindspore: str(d.mindspore.version),
  };
}

function failureHealth(row: DoctorRow, python: string | undefined, t: Translate): Health {
  // whole sentences per case, so a translation orders its own subject
  const why = oneLine(row.description);
  switch (row.label) {
    case 'Python':
      return {
        ok: false,
        problem: 'python',
        python,
        sentence: python
          ? t('No Python was found at {0}: choose a Python that has MindSpore, or create one.', python)
          : t('No Python was found: choose a Python that has MindSpore, or create one.'),
      };
    case 'Runner':
      return {
        ok: false,
        problem: 'runner',
        python,
        sentence: python
          ? t('The Python at {0} cannot find the runner (ascend_finetune): {1}.', python, row.fix ?? t('see the log'))
          : t('The target’s Python cannot find the runner (ascend_finetune): {0}.', row.fix ?? t('see the log')),
      };
    case 'SSH':
      return {
        ok: false,
        problem: 'ssh',
        sentence: t('The SSH connection failed ({0}): log in once in a terminal, then check again.', why),
      };
    default:
      return {
        ok: false,
        problem: 'doctor',
        python,
        sentence: python
          ? t('The Python at {0} could not report on itself ({1}): the log has the details.', python, why)
          : t('The target’s Python could not report on itself ({0}): the log has the details.', why),
      };
  }
}

function oneLine(s: string): string {
  const line =
    s
      .trim()
      .split('\n')
      .filter((l) => l.trim() !== '')
      .pop() ?? s;
  return line.replace(/[.\s]+$/, '');
}

/** What a hint row under a checked target does when clicked: a command id and its arguments. */
export interface FixCommand {
  command: CommandId;
  title: string;
  args: unknown[];
}

/**
 * The command behind a Targets-view hint (a problem row's fix): missing mindcv installs it, Python and MindSpore problems on
 * this machine open "Set Python Path…", an SSH login opens a terminal, a set-up line or an SSH
 * target's Python opens its settings, and anything else shows the log the hint points to.
 */
export function fixCommand(
  row: DoctorRow,
  targetKind: 'local' | 'ssh',
  targetId: string,
  t: Translate = english,
): FixCommand {
  const arg = { targetId };
  if (row.label === 'mindcv')
    return { command: 'ascend.installMindcv', title: t('Install mindcv on Target'), args: [arg] };
  if (targetKind === 'ssh' && (row.label === 'SSH' || /log in|登录/i.test(row.fix ?? '')))
    return { command: 'ascend.sshLogin', title: t('Log In to SSH Target'), args: [arg] };
  if (targetKind === 'local' && (row.label === 'Python' || row.label === 'MindSpore'))
    return { command: 'ascend.setPythonPath', title: t('Set Python Path…'), args: [arg] };
  if (row.label === 'Python' || row.label === 'MindSpore' || row.label === 'CANN' || row.label === 'Runner')
    return {
      command: 'ascend.openTargetSettings',
      title: t('Open Settings'),
      args: [{ targetId, setting: targetKind === 'local' ? 'pythonPath' : 'sshTargets' }],
    };
  return { command: 'ascend.showLog', title: t('Show Log'), args: [] };
}

/**
 * The runtime packages of the runner's requirements (runner/requirements.txt without the test-only
 * ones), for the "create a Python environment" task.
 */
export function runtimeRequirements(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.replace(/#.*/, '').trim())
    .filter((l) => l !== '' && !/^(pytest|ruff|mypy)\b/i.test(l));
}

/**
 * The set-up the README describes (scripts/setup-python.sh without the test tools), as a POSIX sh
 * script with its inputs as positional arguments ($1 venv folder, $2 preferred Python; the rest are
 * the requirements), so no path is ever pasted into shell text. The task shows it in a terminal.
 */
export const VENV_SCRIPT = `set -e
VENV="$1"; PY="$2"; shift 2
command -v "$PY" >/dev/null 2>&1 || PY=python3
echo "Creating $VENV with $("$PY" --version 2>&1) (MindSpore 2.10 has wheels for Python 3.9 to 3.11)"
"$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install --disable-pip-version-check "$@"
"$VENV/bin/python" -c 'import sys, mindspore; print("MindSpore", mindspore.__version__, "is ready in", sys.executable)'
`;

/** argv for the venv task: `sh -c SCRIPT sh VENV PY REQ...`. */
export function venvTaskArgs(venvDir: string, requirements: readonly string[], python = 'python3.11'): string[] {
  return ['-c', VENV_SCRIPT, 'sh', venvDir, python, ...requirements];
}

/**
 * The Start wizard offers Install mindcv on Target when the chosen backbone is a mindcv one and the
 * target's last `doctor` says mindcv (or PyYAML, tqdm) is not usable there. An older runner's doctor,
 * without a mindcv section, says nothing either way: no offer.
 */
export function mindcvMissingFor(backbone: string, doctorOutput: unknown): boolean {
  if (!isMindcvBackbone(backbone)) return false;
  const m = (doctorOutput as { mindcv?: { ok?: unknown } } | undefined)?.mindcv;
  return typeof m === 'object' && m !== null && m.ok === false;
}
