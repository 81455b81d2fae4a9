// The runner's `preview` and `predict` (docs/protocol.md, section 4), here or on an SSH target:
// argv arrays only. `preview` prints `{"progress": ...}` lines before its answer, so it is read line by
// line (runRunner takes stdout as one document); a cancel sends SIGINT, which the runner answers with
// one `cancelled` line and exit 130 (over ssh, ending the client ends the remote session).
import { createInterface } from 'node:readline';
import { errorInfo, RunnerError, runRunner, type RunOptions } from '../targets/runnerCli';
import type { RunnerConfig } from '../targets/invocation';
import { asTarget, type Target } from '../targets/target';
import { progressOf } from './model';

type Runner = RunnerConfig | Target;

/** Keeps a relative path that starts with '-' from being read as an option by argparse. */
function operand(p: string): string {
  return p.startsWith('-') ? `./${p}` : p;
}

export interface PreviewOptions {
  val?: string;
  spec?: string;
  samples?: number;
  maxBytes?: number;
}

export const previewArgs = {
  preview: (dir: string, o: PreviewOptions = {}) => [
    'preview',
    operand(dir),
    ...(o.val === undefined ? [] : ['--val', operand(o.val)]),
    ...(o.spec === undefined ? [] : ['--spec', operand(o.spec)]),
    ...(o.samples === undefined ? [] : ['--samples', String(o.samples)]),
    ...(o.maxBytes === undefined ? [] : ['--max-bytes', String(o.maxBytes)]),
  ],
  // After `--`, no image name is read as an option, whatever it looks like.
  predict: (ckpt: string, files: readonly string[], runDir?: string) => [
    'predict',
    '--ckpt',
    operand(ckpt),
    ...(runDir === undefined ? [] : ['--run', operand(runDir)]),
    '--',
    ...files,
  ],
};

/** A preview that ended because it was cancelled (SIGINT from `cancel`, or the runner's `cancelled`). */
export class PreviewCancelled extends Error {
  constructor(message = 'preview cancelled') {
    super(message);
    this.name = 'PreviewCancelled';
  }
}

export interface PreviewRun {
  /** The runner's answer (unchecked: toPreviewView checks it). */
  result: Promise<unknown>;
  /** Asks the runner to stop (SIGINT); `result` then rejects with PreviewCancelled. */
  cancel(): void;
}

const STDERR_TAIL = 4000;
/** One line of progress is ~40 bytes, the answer at most a few MB (thumbnails are budgeted). */
const MAX_LINE = 64 * 1024 * 1024;

/** Starts `preview` and reports its progress lines as they come. */
export function runPreview(
  runner: Runner,
  dir: string,
  opts: PreviewOptions & { onProgress?: (p: { done: number; total: number }) => void; timeoutMs?: number } = {},
): PreviewRun {
  const target = asTarget(runner);
  const child = target.spawnRunner(previewArgs.preview(dir, opts), { timeoutMs: opts.timeoutMs });
  let cancelled = false;
  const result = new Promise<unknown>((resolve, reject) => {
    let last: unknown;
    let lastText = '';
    let err = '';
    let tooLong = false;
    child.stderr.on('data', (b: Buffer) => {
      err = (err + b.toString('utf8')).slice(-STDERR_TAIL);
    });
    const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
    lines.on('line', (line) => {
      if (line.length > MAX_LINE) tooLong = true;
      if (tooLong || line.trim() === '') return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        lastText = line.slice(0, 200);
        last = undefined;
        return;
      }
      const p = progressOf(parsed);
      if (p) opts.onProgress?.(p);
      else last = parsed;
    });
    let spawnError: Error | undefined;
    child.on('error', (e) => (spawnError = e));
    // 'close' comes after stdout ended, so every line was seen.
    child.on('close', (code, signal) => {
      const info = errorInfo(last);
      if (spawnError)
        return reject(
          new RunnerError(
            `runner preview could not run ${target.program}: ${spawnError.message}`,
            null,
            undefined,
            undefined,
            err,
          ),
        );
      if (cancelled || info?.kind === 'cancelled') return reject(new PreviewCancelled());
      if (tooLong)
        return reject(
          new RunnerError('runner preview printed a line too long to read', code, undefined, undefined, err),
        );
      if (code === 0 && last !== undefined && !info) return resolve(last);
      const message = info
        ? (info.message ?? `runner preview failed (${info.kind ?? 'error'})`)
        : code === 0
          ? `runner preview printed no JSON: ${lastText || '(nothing)'}`
          : `runner preview exited with ${code ?? signal}: ${err.trim().split('\n').pop() || '(no output)'}`;
      reject(new RunnerError(message, code, info, last, err));
    });
  });
  return {
    result,
    cancel() {
      if (cancelled || child.exitCode !== null) return;
      cancelled = true;
      child.kill('SIGINT');
    },
  };
}

/** `predict` on image files: the runner's answer (unchecked: toClassifyView checks it). */
export function predictFiles(
  runner: Runner,
  ckpt: string,
  files: readonly string[],
  runDir?: string,
  opts?: RunOptions,
): Promise<unknown> {
  return runRunner(runner, previewArgs.predict(ckpt, files, runDir), opts);
}
