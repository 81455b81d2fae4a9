import { parseListing, runMeta, type RunMeta } from '../runs/runIndex';
import type { RunnerConfig } from './invocation';
import { asTarget, type Target } from './target';

export { invocation, type Invocation, type RunnerConfig } from './invocation';

export type ControlAction = 'stop' | 'checkpoint';

/** `launch` output. */
export interface LaunchResult {
  run_id: string;
  run_dir: string;
  pid: number;
}

/** `launch` options: a checkpoint to resume from, and a multi-node run's node, port and shared run id. */
export interface LaunchArgs {
  resume?: string;
  nodeRank?: number;
  masterPort?: number;
  runId?: string;
}

/** `nodes` output: what each node of a multi-node run starts (runner/ascend_finetune/distributed/world.py). */
export interface NodePlan {
  world_size: number;
  master_addr: string;
  master_port: number;
  nodes: { node: string; node_rank: number; ranks: number[]; args: string[] }[];
}

/** What a `meta` command changes; what is not given stays. */
export interface MetaChange {
  name?: string;
  notes?: string;
  tag?: string[];
  untag?: string[];
}

/** Keeps a relative path that starts with '-' from being read as an option by argparse. */
function operand(p: string): string {
  return p.startsWith('-') ? `./${p}` : p;
}

/** argv after the launcher for each runner command (DESIGN.md, "The runner contract"). */
export const runnerArgs = {
  /** With `preflight`, also the warnings a run would start with (`warnings`), after a data scan. */
  /** `resume`: the spec of a resumed run, whose model.pretrained file may be gone (the checkpoint replaces it). */
  validate: (spec: string, preflight = false, resume = false) => [
    'validate',
    operand(spec),
    ...(preflight ? ['--preflight'] : []),
    ...(resume ? ['--resume'] : []),
  ],
  train: (spec: string, runDir: string, resume?: string) => [
    'train',
    operand(spec),
    '--run-dir',
    operand(runDir),
    ...(resume === undefined ? [] : ['--resume', operand(resume)]),
  ],
  launch: (spec: string, runsRoot: string, opts: LaunchArgs = {}) => [
    'launch',
    operand(spec),
    '--runs-root',
    operand(runsRoot),
    ...(opts.resume === undefined ? [] : ['--resume', operand(opts.resume)]),
    ...(opts.nodeRank ? ['--node-rank', String(opts.nodeRank)] : []),
    ...(opts.masterPort === undefined ? [] : ['--master-port', String(opts.masterPort)]),
    ...(opts.runId === undefined ? [] : ['--run-id', opts.runId]),
  ],
  /** Per node of a multi-node spec: its train arguments, and one free master port (picked on this target). */
  nodes: (spec: string, runDir: string) => ['nodes', operand(spec), '--run-dir', operand(runDir)],
  attach: (runDir: string, opts: { since?: number; follow?: boolean } = {}) => [
    'attach',
    operand(runDir),
    ...(opts.since === undefined ? [] : ['--since', String(opts.since)]),
    ...(opts.follow === false ? ['--no-follow'] : []),
  ],
  /** `waitS`: how long the runner waits for the run to act (its default: 120 s); a stop not taken yet stays asked. */
  control: (runDir: string, action: ControlAction, waitS?: number) => [
    'control',
    operand(runDir),
    action,
    ...(waitS === undefined ? [] : ['--timeout', String(waitS)]),
  ],
  ls: (root: string) => ['ls', operand(root)],
  /** Shows or changes a run's name, notes and tags (`--name ""` clears the name). */
  meta: (runDir: string, change: MetaChange = {}) => [
    'meta',
    operand(runDir),
    ...(change.name === undefined ? [] : [`--name=${change.name}`]),
    ...(change.notes === undefined ? [] : [`--notes=${change.notes}`]),
    ...(change.tag ?? []).map((t) => `--tag=${t}`),
    ...(change.untag ?? []).map((t) => `--untag=${t}`),
  ],
  doctor: () => ['doctor'],
};

/** The `{"error": {...}}` object a runner command prints when it fails. */
export interface RunnerErrorInfo {
  message?: string;
  kind?: string;
  [field: string]: unknown;
}

/** A runner command that failed: reported by the runner, crashed, or could not start. */
export class RunnerError extends Error {
  constructor(
    message: string,
    /** Exit code; 2 means bad input, 1 a failure, null that it did not start or was killed. */
    readonly exitCode: number | null,
    /** The runner's own `error` object, when it printed one. */
    readonly info: RunnerErrorInfo | undefined,
    /** All of stdout parsed, when it was JSON (e.g. `validate`'s problems). */
    readonly output: unknown,
    /** The end of stderr, for a crash the runner did not report itself. */
    readonly stderrTail: string,
  ) {
    super(message);
    this.name = 'RunnerError';
  }
}

const STDERR_TAIL = 4000;

export interface RunOptions {
  cwd?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** Runs one runner command to completion, here or on an SSH target, and returns its parsed JSON stdout. */
export function runRunner<T = unknown>(
  runner: RunnerConfig | Target,
  args: readonly string[],
  opts: RunOptions = {},
): Promise<T> {
  const target = asTarget(runner);
  const what = `runner ${args[0] ?? ''}`.trim();
  return new Promise<T>((resolve, reject) => {
    const child = target.spawnRunner(args, opts);
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => {
      err = (err + b.toString('utf8')).slice(-STDERR_TAIL);
    });
    let spawnError: Error | undefined;
    child.on('error', (e) => (spawnError = e));
    child.on('close', (code, signal) => {
      const text = Buffer.concat(out).toString('utf8').trim();
      let output: unknown;
      let parsed = text !== '';
      try {
        output = parsed ? JSON.parse(text) : undefined;
      } catch {
        parsed = false;
      }
      const info = errorInfo(output);
      if (code === 0 && parsed && !info) return resolve((args[0] === 'ls' ? checkedListing(output) : output) as T);
      let message: string;
      if (spawnError) message = `${what} could not run ${target.program}: ${spawnError.message}`;
      else if (info) message = info.message ?? `${what} failed (${info.kind ?? 'error'})`;
      else if (code === 0) message = `${what} printed no JSON: ${text.slice(0, 200) || '(nothing)'}`;
      else message = `${what} exited with ${code ?? signal}: ${lastLine(err) || '(no output)'}`;
      // A failed spawn closes with the errno as its "code": report no exit code instead.
      reject(new RunnerError(message, spawnError ? null : code, info, output, err));
    });
  });
}

export function launchRun(
  runner: RunnerConfig | Target,
  spec: string,
  runsRoot: string,
  opts?: RunOptions & LaunchArgs,
): Promise<LaunchResult> {
  return runRunner<LaunchResult>(runner, runnerArgs.launch(spec, runsRoot, opts), opts);
}

export function controlRun(
  runner: RunnerConfig | Target,
  runDir: string,
  action: ControlAction,
  opts?: RunOptions & { waitS?: number },
): Promise<unknown> {
  return runRunner(runner, runnerArgs.control(runDir, action, opts?.waitS), opts);
}

/** `meta` on a run directory: changes what is given and answers the run's metadata (checked). */
export async function setRunMeta(
  runner: RunnerConfig | Target,
  runDir: string,
  change: MetaChange,
  opts?: RunOptions,
): Promise<RunMeta> {
  const out = await runRunner<{ meta?: unknown }>(runner, runnerArgs.meta(runDir, change), opts);
  const meta = runMeta(out?.meta);
  if (!meta) throw new RunnerError('runner meta printed no meta object', 0, undefined, out, '');
  return meta;
}

/**
 * `ls` output with its runs checked (`parseListing`): runs of the wrong shape are left out and
 * fields of the wrong type dropped, so callers that take `runs` as typed never see them; what was
 * left out is in `skipped`, for the caller's log.
 */
export function checkedListing(output: unknown): unknown {
  const { runs, warnings } = parseListing(output);
  return { ...(typeof output === 'object' && output !== null ? output : {}), runs, skipped: warnings };
}

/** The runner's `error` object, if `output` is `{"error": {...}}`. */
export function errorInfo(output: unknown): RunnerErrorInfo | undefined {
  if (typeof output !== 'object' || output === null || !('error' in output)) return undefined;
  const e = (output as { error: unknown }).error;
  if (typeof e === 'object' && e !== null) return e as RunnerErrorInfo;
  return { message: String(e) };
}

function lastLine(text: string): string {
  const lines = text.trim().split('\n');
  return lines[lines.length - 1] ?? '';
}
