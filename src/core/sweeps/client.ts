// A typed client for the runner's sweep commands (`sweep`, `sweep-status`, `sweep-ls`, `sweep-stop`;
// docs/protocol.md section 7), in the style of checkpoints/client.ts: argv arrays only, one JSON
// object back, checked here before anyone relies on it, so a runner of another version gives a
// clear error naming the field instead of a view that breaks on it.
import { WordedError } from '../l10n';
import { RunnerError, runRunner, type RunOptions } from '../targets/runnerCli';
import type { RunnerConfig } from '../targets/invocation';
import type { Target } from '../targets/target';

import type {
  ListedSweep,
  Objective,
  ParamValue,
  SweepBest,
  SweepCounts,
  SweepStarted,
  SweepState,
  SweepStatus,
  SweepTrial,
  TrialState,
} from '../../shared/sweepProtocol';

export type * from '../../shared/sweepProtocol';

type Runner = RunnerConfig | Target;

/** Keeps a relative path that starts with '-' from being read as an option by argparse. */
function operand(p: string): string {
  return p.startsWith('-') ? `./${p}` : p;
}

export const sweepArgs = {
  /** A new sweep from a spec file under `root` (or resume `sweepId`), detached like `launch`. */
  start: (spec: string, root: string, sweepId?: string) => [
    'sweep',
    operand(spec),
    '--root',
    operand(root),
    ...(sweepId === undefined ? [] : ['--sweep-id', sweepId]),
    '--detach',
  ],
  /** Resumes the sweep kept in `sweepDir`. */
  resume: (sweepDir: string) => ['sweep', operand(sweepDir), '--detach'],
  status: (sweepDir: string) => ['sweep-status', operand(sweepDir)],
  stop: (sweepDir: string, drain = false, timeoutS?: number) => [
    'sweep-stop',
    operand(sweepDir),
    ...(drain ? ['--drain'] : []),
    ...(timeoutS === undefined ? [] : ['--timeout', String(timeoutS)]),
  ],
  ls: (root: string) => ['sweep-ls', operand(root)],
};

// ---- checks ----

/** The runner's answer did not have the shape this version reads: names the field. */
export class SweepOutputError extends WordedError {
  constructor(
    readonly command: string,
    readonly field: string,
    got: unknown,
  ) {
    const shown = JSON.stringify(got)?.slice(0, 60);
    super((t) =>
      shown === undefined
        ? t(
            'runner {0}: {1} is missing, not what this extension reads (is the runner the same version?)',
            command,
            field,
          )
        : t(
            'runner {0}: {1} is {2}, not what this extension reads (is the runner the same version?)',
            command,
            field,
            shown,
          ),
    );
    this.name = 'SweepOutputError';
  }
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const SWEEP_STATES: ReadonlySet<string> = new Set(['running', 'completed', 'stopped', 'failed', 'lost']);
const TRIAL_STATES: ReadonlySet<string> = new Set(['RUNNING', 'COMPLETE', 'PRUNED', 'FAIL', 'WAITING']);

class Reader {
  constructor(
    private readonly command: string,
    private readonly prefix = '',
  ) {}
  at(field: string): Reader {
    return new Reader(this.command, this.prefix + field);
  }
  fail(field: string, got: unknown): never {
    throw new SweepOutputError(this.command, this.prefix + field, got);
  }
  obj(o: Record<string, unknown>, f: string): Record<string, unknown> {
    return isObj(o[f]) ? o[f] : this.fail(f, o[f]);
  }
  str(o: Record<string, unknown>, f: string): string {
    return typeof o[f] === 'string' ? o[f] : this.fail(f, o[f]);
  }
  optStr(o: Record<string, unknown>, f: string): string | null {
    return o[f] == null ? null : this.str(o, f);
  }
  int(o: Record<string, unknown>, f: string): number {
    return Number.isSafeInteger(o[f]) ? (o[f] as number) : this.fail(f, o[f]);
  }
  optInt(o: Record<string, unknown>, f: string): number | null {
    return o[f] == null ? null : this.int(o, f);
  }
  num(o: Record<string, unknown>, f: string): number {
    return typeof o[f] === 'number' && Number.isFinite(o[f]) ? o[f] : this.fail(f, o[f]);
  }
  optNum(o: Record<string, unknown>, f: string): number | null {
    return o[f] == null ? null : this.num(o, f);
  }
  params(o: Record<string, unknown>, f: string): Record<string, ParamValue> {
    const p = this.obj(o, f);
    for (const [k, v] of Object.entries(p))
      if (v !== null && !['string', 'number', 'boolean'].includes(typeof v)) this.fail(`${f}.${k}`, v);
    return p as Record<string, ParamValue>;
  }
  state(o: Record<string, unknown>, f: string): SweepState {
    return typeof o[f] === 'string' && SWEEP_STATES.has(o[f]) ? (o[f] as SweepState) : this.fail(f, o[f]);
  }
}

function objective(r: Reader, o: Record<string, unknown>): Objective {
  const obj = r.obj(o, 'objective');
  const direction = obj.direction;
  if (direction !== 'maximize' && direction !== 'minimize') r.fail('objective.direction', direction);
  return { metric: r.at('objective.').str(obj, 'metric'), direction };
}

function counts(r: Reader, o: Record<string, unknown>, f: string): SweepCounts {
  const c = r.obj(o, f);
  const rc = r.at(`${f}.`);
  return {
    complete: rc.int(c, 'complete'),
    pruned: rc.int(c, 'pruned'),
    fail: rc.int(c, 'fail'),
    running: rc.int(c, 'running'),
    waiting: rc.int(c, 'waiting'),
    counted: rc.int(c, 'counted'),
  };
}

function best(r: Reader, o: Record<string, unknown>): SweepBest | null {
  if (o.best == null) return null;
  const b = r.obj(o, 'best');
  const rb = r.at('best.');
  return {
    number: rb.int(b, 'number'),
    value: rb.num(b, 'value'),
    params: rb.params(b, 'params'),
    run_id: rb.optStr(b, 'run_id'),
    run_dir: rb.optStr(b, 'run_dir'),
  };
}

function trial(r: Reader, t: unknown): SweepTrial {
  if (!isObj(t)) r.fail('', t);
  const state = t.state;
  if (typeof state !== 'string' || !TRIAL_STATES.has(state)) r.fail('state', state);
  const reported: [number, number | null][] = [];
  if (t.reported != null) {
    if (!Array.isArray(t.reported)) r.fail('reported', t.reported);
    for (const [i, p] of (t.reported as unknown[]).entries()) {
      if (!Array.isArray(p) || !Number.isSafeInteger(p[0]) || !(p[1] === null || Number.isFinite(p[1])))
        r.fail(`reported[${i}]`, p);
      reported.push([p[0] as number, p[1] as number | null]);
    }
  }
  return {
    number: r.int(t, 'number'),
    state: state as TrialState,
    outcome: r.optStr(t, 'outcome'),
    params: r.params(t, 'params'),
    value: r.optNum(t, 'value'),
    run_id: r.optStr(t, 'run_id'),
    run_dir: r.optStr(t, 'run_dir'),
    pruned_at: r.optInt(t, 'pruned_at'),
    reported,
    reason: typeof t.reason === 'string' ? t.reason : t.reason == null ? null : JSON.stringify(t.reason),
    // An older runner sends neither; an ill-typed one is dropped, and the English reason stands.
    reason_code: typeof t.reason_code === 'string' ? t.reason_code : null,
    error_code: typeof t.error_code === 'string' ? t.error_code : null,
    error_params: isObj(t.error_params) ? t.error_params : null,
    retry_of: r.optInt(t, 'retry_of'),
  };
}

/** `sweep --detach`'s answer, checked. */
export function toSweepStarted(out: unknown): SweepStarted {
  const r = new Reader('sweep');
  const o = isObj(out) ? out : r.fail('output', out);
  return {
    sweep_id: r.str(o, 'sweep_id'),
    sweep_dir: r.str(o, 'sweep_dir'),
    pid: r.int(o, 'pid'),
    resumed: o.resumed === true,
  };
}

/** `sweep-status`'s document, checked; importances that do not read as numbers are dropped (null). */
export function toSweepStatus(out: unknown): SweepStatus {
  const r = new Reader('sweep-status');
  const o = isObj(out) ? out : r.fail('output', out);
  if (!Array.isArray(o.trials)) r.fail('trials', o.trials);
  let importances: Record<string, number> | null = null;
  if (isObj(o.importances)) {
    const entries = Object.entries(o.importances).filter(([, v]) => typeof v === 'number' && Number.isFinite(v));
    importances = entries.length ? (Object.fromEntries(entries) as Record<string, number>) : null;
  }
  return {
    sweep_id: r.str(o, 'sweep_id'),
    sweep_dir: r.str(o, 'sweep_dir'),
    name: r.str(o, 'name'),
    state: r.state(o, 'state'),
    objective: objective(r, o),
    sampler: typeof o.sampler === 'string' ? o.sampler : null,
    pruner: typeof o.pruner === 'string' ? o.pruner : null,
    trials_target: r.int(o, 'trials_target'),
    counts: counts(r, o, 'counts'),
    trials: (o.trials as unknown[]).map((t, i) => trial(r.at(`trials[${i}].`), t)),
    best: best(r, o),
    importances,
    started_at: r.optNum(o, 'started_at'),
    ended_at: r.optNum(o, 'ended_at'),
  };
}

/** `sweep-ls`'s sweeps, checked: a sweep of the wrong shape is left out with a warning (as `ls` runs are). */
export function toSweepListing(out: unknown): { sweeps: ListedSweep[]; warnings: string[] } {
  const warnings: string[] = [];
  const raw = isObj(out) ? out.sweeps : undefined;
  if (!Array.isArray(raw)) throw new SweepOutputError('sweep-ls', 'sweeps', raw);
  const sweeps: ListedSweep[] = [];
  raw.forEach((s: unknown, i) => {
    const r = new Reader('sweep-ls', `sweeps[${i}].`);
    try {
      const o = isObj(s) ? s : r.fail('', s);
      sweeps.push({
        sweep_id: r.str(o, 'sweep_id'),
        sweep_dir: r.str(o, 'sweep_dir'),
        name: r.str(o, 'name'),
        state: r.state(o, 'state'),
        started_at: r.optNum(o, 'started_at'),
        ended_at: r.optNum(o, 'ended_at'),
        objective: objective(r, o),
        trials_target: r.int(o, 'trials_target'),
        counts: o.counts == null ? null : counts(r, o, 'counts'),
        best: best(r, o),
      });
    } catch (e) {
      if (!(e instanceof SweepOutputError)) throw e;
      warnings.push(`${e.message} (sweep skipped)`);
    }
  });
  return { sweeps, warnings };
}

export async function startSweep(runner: Runner, spec: string, root: string, opts?: RunOptions): Promise<SweepStarted> {
  return toSweepStarted(await runRunner(runner, sweepArgs.start(spec, root), opts));
}

export async function resumeSweep(runner: Runner, sweepDir: string, opts?: RunOptions): Promise<SweepStarted> {
  return toSweepStarted(await runRunner(runner, sweepArgs.resume(sweepDir), opts));
}

export async function sweepStatus(runner: Runner, sweepDir: string, opts?: RunOptions): Promise<SweepStatus> {
  return toSweepStatus(await runRunner(runner, sweepArgs.status(sweepDir), opts));
}

export async function listSweeps(
  runner: Runner,
  root: string,
  opts?: RunOptions,
): Promise<{ sweeps: ListedSweep[]; warnings: string[] }> {
  return toSweepListing(await runRunner(runner, sweepArgs.ls(root), opts));
}

/** `sweep-stop`: `{action, state, handled}`; `not_running` (a RunnerError) when it is not running. */
export async function stopSweep(
  runner: Runner,
  sweepDir: string,
  o: RunOptions & { drain?: boolean; timeoutS?: number } = {},
): Promise<{ action: string; state: string; handled: boolean }> {
  const out = await runRunner<unknown>(runner, sweepArgs.stop(sweepDir, o.drain, o.timeoutS), o);
  if (!isObj(out) || typeof out.state !== 'string')
    throw new RunnerError('runner sweep-stop printed no state', 0, undefined, out, '');
  return { action: String(out.action), state: out.state, handled: out.handled === true };
}
