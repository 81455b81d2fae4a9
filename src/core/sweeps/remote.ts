// Starting a sweep on an SSH target from a sweep file on this machine. The runner there cannot read
// the workspace, so the sweep spec goes over as one JSON file with its base run spec inline:
// - `base` read here (relative to the sweep file, as the runner reads it) with its data and weights
//   paths made absolute against the base file's folder (Start from Spec File does the same: a spec
//   meant for a target names that target's paths);
// - path choices of the space (`data.val`, `model.pretrained`) made absolute against the sweep file's
//   folder, as the runner would make them;
// - a `base` that is an absolute or `~` path with no file here stays a path: the target's own file
//   (a sweep made from a run on that target names the run's spec.json there).
// The file is written by the target's Python (ops.writeTargetFile: argv only, quoted once by the
// ssh layer) under ~/.ascend-finetune/sweeps/, then `sweep FILE --root ROOT --detach` starts it.
import * as path from 'node:path';
import { MAX_SPEC_BYTES, readRegularFile } from '../dashboard/runFiles';
import { absolutizeSpecPaths, slugOf } from '../spec/builder';
import { pathFields } from '../spec/fields';
import { parseSpecText } from '../spec/file';
import { WordedError, wordedErrorText, type Translate } from '../l10n';
import { isNamedWeights } from '../spec/weightSources';
import { writeTargetFile, type PythonTargetFactory } from '../targets/ops';
import type { RunOptions } from '../targets/runnerCli';
import type { Target } from '../targets/target';
import { startSweep, type SweepStarted } from './client';

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isAbsolute = (p: string) => p.startsWith('/') || p.startsWith('~') || /^[A-Za-z]:[\\/]/.test(p);

/** A problem with the local sweep file or its base, naming the field and what to do. */
export class SweepFileError extends WordedError {
  constructor(words: (t: Translate) => string) {
    super(words);
    this.name = 'SweepFileError';
  }
}

/** The sweep spec's own file, or the run spec its `base` names. */
function readSpecFile(file: string, what: 'sweep' | 'base'): unknown | undefined {
  const r = readRegularFile(file, MAX_SPEC_BYTES);
  if (r.ok === 'missing') return undefined;
  if (r.ok === false) {
    const problem = r.problem;
    throw new SweepFileError((t) => (what === 'base' ? t('base: {0}', problem) : t('the sweep spec: {0}', problem)));
  }
  try {
    return parseSpecText(r.value.toString('utf8'), file);
  } catch (e) {
    const name = path.basename(file);
    throw new SweepFileError((t) => {
      const why = wordedErrorText(e, t) ?? (e as Error).message;
      return what === 'base' ? t('base {0}: {1}', name, why) : t('the sweep spec {0}: {1}', name, why);
    });
  }
}

/**
 * The sweep spec of `sweepFile` as the target needs it (see the header): a plain object, ready to
 * be written as JSON. Throws SweepFileError when the file or a relative `base` cannot be read.
 */
export function sweepSpecForTarget(sweepFile: string): Record<string, unknown> {
  const raw = readSpecFile(sweepFile, 'sweep');
  if (raw === undefined) throw new SweepFileError((t) => t('the sweep spec {0} does not exist', sweepFile));
  if (!isObj(raw))
    throw new SweepFileError((t) => t('the sweep spec {0} must be a mapping of fields', path.basename(sweepFile)));
  const dir = path.dirname(sweepFile);
  const out: Record<string, unknown> = { ...raw };
  if (typeof raw.base === 'string' && raw.base !== '') {
    const local = raw.base.startsWith('~') ? undefined : path.resolve(dir, raw.base);
    const name = raw.base;
    const base = local === undefined ? undefined : readSpecFile(local, 'base');
    if (base !== undefined) {
      if (!isObj(base))
        throw new SweepFileError((t) => t('base: {0} must hold a run spec (a mapping of fields)', name));
      out.base = absolutizeSpecPaths(base, path.dirname(local!), path.join);
    } else if (!isAbsolute(raw.base)) {
      throw new SweepFileError((t) =>
        t('base: {0} is not found next to the sweep file: fix the path, or give the base spec inline', name),
      );
    } // else: a path on the target, read there
  } else if (isObj(raw.base)) {
    out.base = absolutizeSpecPaths(raw.base, dir, path.join);
  }
  if (isObj(raw.space)) {
    const paths = new Set(pathFields().map((f) => f.path));
    const fix = (v: unknown) =>
      typeof v === 'string' && v !== '' && !isAbsolute(v) && !isNamedWeights(v) ? path.join(dir, v) : v;
    out.space = Object.fromEntries(
      Object.entries(raw.space).map(([k, entry]) =>
        paths.has(k) && isObj(entry) && Array.isArray(entry.choices)
          ? [k, { ...entry, choices: entry.choices.map(fix) }]
          : [k, entry],
      ),
    );
  }
  return out;
}

/** `~/.ascend-finetune/sweeps/<stamp>-<name>.ascend-sweep.json`: where the target keeps the copy. */
export function targetSweepPath(name: string, now: Date): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, '')
    .replace('T', '-');
  return `~/.ascend-finetune/sweeps/${stamp}-${slugOf(name)}.ascend-sweep.json`;
}

export interface RemoteSweepStart {
  /** The sweep spec's path on the target (absolute). */
  specPath: string;
  started: SweepStarted;
}

/** Copies the sweep file (base inline) to the target and starts it there, detached, under `runsRoot`. */
export async function startSweepOnTarget(
  runner: Target,
  python: PythonTargetFactory,
  sweepFile: string,
  runsRoot: string,
  opts: RunOptions & { now?: Date } = {},
): Promise<RemoteSweepStart> {
  const spec = sweepSpecForTarget(sweepFile);
  const name = typeof spec.name === 'string' && spec.name ? spec.name : path.basename(sweepFile).split('.')[0];
  const { now, ...runOpts } = opts;
  const specPath = await writeTargetFile(
    python,
    targetSweepPath(name, now ?? new Date()),
    JSON.stringify(spec, null, 2) + '\n',
    runOpts,
  );
  return { specPath, started: await startSweep(runner, specPath, runsRoot, runOpts) };
}
