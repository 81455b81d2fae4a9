// Copies a checkpoint from a target (an SSH host, or this machine) into a local folder: the
// target's Python streams the file's bytes on stdout through the same transport as every runner
// command (so ProxyJump, shared logins and bastions work as they do for runs), and this side hashes
// them as they arrive. The file is written as `<name>.part-<pid>` and renamed only when its size and
// sha256 match checkpoints.json; on a mismatch, an error or a cancel the partial file is deleted.
import { createHash } from 'node:crypto';
import { createWriteStream, mkdirSync, renameSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { PythonTargetFactory } from '../targets/ops';
import { WordedError, type Translate } from '../l10n';

const STREAM = `import os, sys
p = os.path.abspath(os.path.expanduser(sys.argv[1]))
try:
    f = open(p, "rb")
except OSError as e:
    sys.stderr.write("cannot read %s: %s\\n" % (p, e.strerror))
    sys.exit(2)
out = sys.stdout.buffer
with f:
    while True:
        b = f.read(1 << 20)
        if not b:
            break
        out.write(b)
out.flush()
`;

export interface Expected {
  /** From checkpoints.json; null when the manifest has none (then only the hash is reported). */
  bytes: number | null;
  sha256: string | null;
}

export interface DownloadOptions {
  /** Called as bytes arrive (about every MiB, and at the end); `total` from the manifest. */
  onProgress?: (done: number, total: number | null) => void;
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface DownloadResult {
  file: string;
  bytes: number;
  sha256: string;
  /** True when the manifest had a sha256 and it matched; false when there was none to check. */
  verified: boolean;
}

/** The download arrived but is not the file checkpoints.json describes; the partial file is gone. */
export class IntegrityError extends WordedError {
  constructor(
    words: (t: Translate) => string,
    readonly expected: Expected,
    readonly actual: { bytes: number; sha256: string },
  ) {
    super(words);
    this.name = 'IntegrityError';
  }
}

const short = (h: string) => `${h.slice(0, 12)}…`;

/** Downloads `remoteFile` (a path on the target) to `localFile`, verifying it against `expected`. */
export async function downloadCheckpoint(
  target: PythonTargetFactory,
  remoteFile: string,
  localFile: string,
  expected: Expected,
  opts: DownloadOptions = {},
): Promise<DownloadResult> {
  mkdirSync(path.dirname(localFile), { recursive: true });
  const part = `${localFile}.part-${process.pid}`;
  const hash = createHash('sha256');
  let done = 0;
  let reported = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      hash.update(chunk);
      done += chunk.length;
      if (opts.onProgress && (done - reported >= 1 << 20 || done === expected.bytes)) {
        reported = done;
        opts.onProgress(done, expected.bytes);
      }
      cb(null, chunk);
    },
  });
  const child = target(['-c', STREAM]).spawnRunner([remoteFile], { signal: opts.signal, timeoutMs: opts.timeoutMs });
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr = (stderr + b.toString('utf8')).slice(-4000)));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((resolve) => {
    let error: Error | undefined;
    child.on('error', (e) => (error = e));
    child.on('close', (code, signal) => resolve({ code, signal, error }));
  });
  try {
    const [, exit] = await Promise.all([pipeline(child.stdout, counter, createWriteStream(part)), exited]);
    if (exit.error || exit.code !== 0) {
      const why = exit.error?.message ?? (stderr.trim().split('\n').pop() || `exit ${exit.code ?? exit.signal}`);
      throw new WordedError((t) => t('could not read {0} on the target: {1}', remoteFile, why));
    }
    const sha256 = hash.digest('hex');
    const sizeBad = expected.bytes !== null && done !== expected.bytes;
    const shaBad = expected.sha256 !== null && sha256 !== expected.sha256.toLowerCase();
    if (sizeBad || shaBad) {
      rmSync(part, { force: true });
      const name = path.basename(remoteFile);
      const [got, want] = sizeBad ? [done, expected.bytes!] : [short(sha256), short(expected.sha256!)];
      const words = (t: Translate) =>
        sizeBad
          ? t('{0}: {1} bytes arrived, checkpoints.json says {2}; the partial download was deleted', name, got, want)
          : t(
              "{0}: sha256 {1} does not match checkpoints.json's {2}; the partial download was deleted",
              name,
              got,
              want,
            );
      throw new IntegrityError(words, expected, {
        bytes: done,
        sha256,
      });
    }
    renameSync(part, localFile);
    opts.onProgress?.(done, expected.bytes);
    return { file: localFile, bytes: done, sha256, verified: expected.sha256 !== null };
  } catch (e) {
    rmSync(part, { force: true });
    child.kill();
    throw e;
  }
}

/** Where a download goes by default: `<folder>/<run id>/<checkpoint file name>`. */
export function downloadPath(folder: string, runId: string, file: string): string {
  const safeRun = runId.replace(/[^A-Za-z0-9_.-]+/g, '-').replace(/^[-.]+/, '') || 'run';
  return path.join(folder, safeRun, path.posix.basename(file));
}
