import { setTimeout as sleep } from 'node:timers/promises';
import { eventProblem, hasEventEnvelope, isRunEvent, type RunEvent } from '../../shared/eventsProtocol';
import { EventSequencer, type GapHandler } from './eventStream';
import { JsonlReader, type BadLineHandler } from './jsonlReader';
import { errorInfo, runnerArgs, type RunnerConfig, type RunnerErrorInfo } from '../targets/runnerCli';
import { asTarget, type Target } from '../targets/target';
import { WordedError, type Translate } from '../l10n';

export interface FollowOptions {
  /** Where the run is: this machine (a RunnerConfig, or a local Target) or an SSH target. */
  runner: RunnerConfig | Target;
  /** The run directory, as a path on the target. */
  runDir: string;
  /** Last seq the caller already has; events after it are delivered. */
  since?: number;
  /** False: deliver what the run has written so far and stop (`--no-follow`). */
  follow?: boolean;
  /** Consecutive attaches that bring no new event before giving up. */
  maxRetries?: number;
  /** First reconnect delay; doubles per consecutive failure, up to 10 s. */
  backoffMs?: number;
  /** Stops following (the run itself keeps going). */
  signal?: AbortSignal;
  /** A line that is not JSON, or an event whose fields have the wrong types (`spec: null`): skipped. */
  onBadLine?: BadLineHandler;
  onGap?: GapHandler;
  onReconnect?: (info: ReconnectInfo) => void;
  /**
   * A `{"warning": {kind, message, ...}}` line of attach's stderr (a `bad_line` it skipped): to
   * log. Never a failure: the stream goes on, and such lines stay out of the stderr tail.
   */
  onRunnerWarning?: (warning: AttachWarning) => void;
}

/** One warning line of attach's stderr (docs/protocol.md, `attach`). */
export interface AttachWarning {
  kind: string;
  message: string;
  line?: number;
}

/** The warning of one stderr line, when the line is `{"warning": {...}}`; else undefined. */
export function attachWarning(line: string): AttachWarning | undefined {
  const t = line.trim();
  if (!t.startsWith('{"warning"')) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(t);
  } catch {
    return undefined;
  }
  const w = (v as { warning?: unknown }).warning;
  if (typeof w !== 'object' || w === null || Array.isArray(w)) return undefined;
  const o = w as Record<string, unknown>;
  return {
    kind: typeof o.kind === 'string' ? o.kind : 'warning',
    message: typeof o.message === 'string' ? o.message : JSON.stringify(o).slice(0, 300),
    ...(Number.isSafeInteger(o.line) ? { line: o.line as number } : {}),
  };
}

export interface ReconnectInfo {
  attempt: number;
  since: number;
  delayMs: number;
  reason: string;
}

/** Following stopped for a reason a reconnect cannot fix. */
export class FollowError extends WordedError {
  constructor(
    words: (t: Translate) => string,
    readonly exitCode: number | null,
    /** The runner's `error` object, when it reported one. */
    readonly info: RunnerErrorInfo | undefined,
    readonly stderrTail: string,
  ) {
    super(words);
    this.name = 'FollowError';
  }
}

const MAX_BACKOFF_MS = 10_000;
const STDERR_TAIL = 4000;

/**
 * Streams a run's events from the runner's `attach`, each exactly once and in order, until
 * `run_finished`. A stream that ends early (killed process, dropped SSH) is re-attached with
 * `--since <last seq>`; a runner that reports an error, or exits 2 (bad input), is not retried.
 * Breaking out of the loop kills the attach process, not the run.
 */
export async function* followRun(opts: FollowOptions): AsyncGenerator<RunEvent, void, undefined> {
  const follow = opts.follow ?? true;
  const maxRetries = opts.maxRetries ?? 5;
  const backoffMs = opts.backoffMs ?? 500;
  const target = asTarget(opts.runner);
  const sequencer = new EventSequencer(opts.since ?? 0, opts.onGap);
  let failures = 0;

  for (;;) {
    const child = target.spawnRunner(runnerArgs.attach(opts.runDir, { since: sequencer.lastSeq, follow }), {
      signal: opts.signal,
    });
    let stderr = '';
    let partial = '';
    child.stderr.on('data', (b: Buffer) => {
      // Whole lines: warnings go to their handler, the rest to the tail kept for a failure.
      const lines = (partial + b.toString('utf8')).split('\n');
      partial = (lines.pop() ?? '').slice(-STDERR_TAIL);
      for (const line of lines) {
        const w = attachWarning(line);
        if (w) opts.onRunnerWarning?.(w);
        else stderr = (stderr + line + '\n').slice(-STDERR_TAIL);
      }
    });
    // Registered before reading so neither event is missed; a failed spawn emits 'error' only.
    const exited = new Promise<{ code: number | null; signal: string | null; error?: Error }>((resolve) => {
      child.once('error', (error) => resolve({ code: null, signal: null, error }));
      child.once('close', (code, signal) => resolve({ code, signal }));
    });

    const reader = new JsonlReader(opts.onBadLine);
    let finished = false;
    let progressed = false;
    let reported: RunnerErrorInfo | undefined;
    function* deliver(values: unknown[]): Generator<RunEvent> {
      for (const value of values) {
        if (finished) return;
        if (isRunEvent(value)) {
          if (!sequencer.accept(value)) continue;
          progressed = true;
          finished = value.type === 'run_finished';
          yield value;
        } else if (hasEventEnvelope(value)) {
          // Valid JSON of the wrong types: skipped with a warning, the stream goes on. Its seq
          // counts, so it is no gap and is not fetched again; a run_finished still ends the run.
          const problem = eventProblem(value) ?? 'bad event';
          opts.onBadLine?.(JSON.stringify(value).slice(0, 500), new Error(problem));
          if (!sequencer.accept(value)) continue;
          progressed = true;
          finished = value.type === 'run_finished';
        } else {
          reported ??= errorInfo(value);
        }
      }
    }

    try {
      try {
        for await (const chunk of child.stdout) {
          yield* deliver(reader.feed(chunk as Buffer));
          if (finished) return;
        }
      } catch {
        // A stream torn down by a kill or abort: judged below by the exit.
      }
      yield* deliver(reader.end());
      if (finished) return;
    } finally {
      // Also runs when the consumer stops early: never leave an attach process behind.
      if (child.exitCode === null && child.signalCode === null) child.kill();
    }

    const exit = await exited;
    if (partial) {
      const w = attachWarning(partial);
      if (w) opts.onRunnerWarning?.(w);
      else stderr = (stderr + partial).slice(-STDERR_TAIL);
      partial = '';
    }
    if (opts.signal?.aborted) return;
    if (!follow && exit.code === 0) return;
    if (reported) {
      const { message, kind } = reported;
      throw new FollowError((t) => message ?? t('attach failed ({0})', kind ?? 'error'), exit.code, reported, stderr);
    }
    if (exit.error)
      throw new FollowError(
        (t) => t('could not run {0}: {1}', target.program, exit.error!.message),
        null,
        undefined,
        stderr,
      );
    if (exit.code === 2)
      throw new FollowError(
        (t) => t('attach refused its input: {0}', stderr.trim() || t('(no output)')),
        2,
        undefined,
        stderr,
      );

    // Only attaches that bring nothing new count towards giving up: a long run may drop often.
    failures = progressed ? 1 : failures + 1;
    const ended = String(exit.code ?? exit.signal);
    const reason = `attach ended with ${ended} before run_finished`;
    if (failures > maxRetries) {
      throw new FollowError(
        (t) => t('attach ended with {0} before run_finished; gave up after {1} retries', ended, maxRetries),
        exit.code,
        undefined,
        stderr,
      );
    }
    const delayMs = Math.min(backoffMs * 2 ** (failures - 1), MAX_BACKOFF_MS);
    opts.onReconnect?.({ attempt: failures, since: sequencer.lastSeq, delayMs, reason });
    try {
      await sleep(delayMs, undefined, { signal: opts.signal });
    } catch {
      return; // aborted while waiting
    }
  }
}
