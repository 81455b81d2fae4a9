// Named weight sources in a target's weights cache: the runner's `weights-status` (which sources are
// there, no request: docs/protocol.md) and `fetch-weights --progress` (download one now, with progress
// and cancel), for the Start wizard's pretrained step; and this machine's cache read directly for the
// language server, which runs here and cannot ask a target. Argv arrays only.
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, statSync, type Stats } from 'node:fs';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { errorInfo, RunnerError, runRunner, type RunOptions } from './runnerCli';
import type { RunnerConfig } from './invocation';
import { asTarget, type Target } from './target';

type Runner = RunnerConfig | Target;

export type CacheState = 'cached' | 'missing' | 'damaged' | 'unsafe' | 'unreadable';

export interface CacheEntry {
  source: string;
  path: string;
  state: CacheState;
  /** The cached file's size (state `cached` or `damaged`). */
  bytes: number | null;
  /** A `.part` a download would resume. */
  partBytes: number;
  why?: string;
}

const STATES: readonly string[] = ['cached', 'missing', 'damaged', 'unsafe', 'unreadable'];

/** `weights-status`'s answer as entries keyed by source; throws on another shape. */
export function asCacheListing(doc: unknown): Map<string, CacheEntry> {
  const sources = (doc as { sources?: unknown } | null)?.sources;
  if (!Array.isArray(sources)) throw new Error('weights-status: no "sources" list in the answer');
  const out = new Map<string, CacheEntry>();
  for (const s of sources as Record<string, unknown>[]) {
    if (typeof s?.source !== 'string' || typeof s.path !== 'string' || !STATES.includes(String(s.state)))
      throw new Error(`weights-status: a bad entry ${JSON.stringify(s).slice(0, 200)}`);
    out.set(s.source, {
      source: s.source,
      path: s.path,
      state: s.state as CacheState,
      bytes: typeof s.bytes === 'number' ? s.bytes : null,
      partBytes: typeof s.part_bytes === 'number' ? s.part_bytes : 0,
      why: typeof s.why === 'string' ? s.why : undefined,
    });
  }
  return out;
}

/** Which sources (default: the catalog's) the runner's machine has in its weights cache. */
export async function weightsCacheListing(
  runner: Runner,
  sources: readonly string[] = [],
  opts?: RunOptions,
): Promise<Map<string, CacheEntry>> {
  // `--` keeps a source from being read as an option.
  return asCacheListing(await runRunner(runner, ['weights-status', '--', ...sources], opts));
}

export interface FetchedWeights {
  path: string;
  sha256: string;
  /** True: it was in the cache already. */
  cached: boolean;
  /** A mindcv file name's hex (the start of its sha256 by mindcv's naming rule), and whether it matched. */
  nameHash?: { expected: string; ok: boolean };
}

export class FetchCancelled extends Error {
  constructor() {
    super('download cancelled');
    this.name = 'FetchCancelled';
  }
}

export interface FetchRun {
  result: Promise<FetchedWeights>;
  /** SIGINT: the runner keeps the `.part`, which the next download (or the run) resumes. */
  cancel(): void;
}

/** `fetch-weights --progress SOURCE` on the runner's machine; progress in bytes (total null: unknown). */
export function fetchWeights(
  runner: Runner,
  source: string,
  onProgress?: (done: number, total: number | null) => void,
): FetchRun {
  const target = asTarget(runner);
  const child = target.spawnRunner(['fetch-weights', '--progress', '--', source]);
  let cancelled = false;
  const result = new Promise<FetchedWeights>((resolve, reject) => {
    let last: unknown;
    let err = '';
    child.stderr.on('data', (b: Buffer) => (err = (err + b.toString('utf8')).slice(-4000)));
    createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', (line) => {
      let doc: unknown;
      try {
        doc = JSON.parse(line);
      } catch {
        return; // not ours: the answer is the last JSON line
      }
      const p = (doc as { progress?: { done?: unknown; total?: unknown } } | null)?.progress;
      if (p && typeof p.done === 'number') onProgress?.(p.done, typeof p.total === 'number' ? p.total : null);
      else last = doc;
    });
    let spawnError: Error | undefined;
    child.on('error', (e) => (spawnError = e));
    child.on('close', (code, signal) => {
      if (cancelled) return reject(new FetchCancelled());
      const info = errorInfo(last);
      const doc = last as (Partial<FetchedWeights> & { name_hash?: unknown; name_hash_ok?: unknown }) | undefined;
      if (code === 0 && !info && typeof doc?.path === 'string' && typeof doc.sha256 === 'string') {
        const { name_hash: expected, name_hash_ok: ok } = doc;
        const nameHash = typeof expected === 'string' && typeof ok === 'boolean' ? { expected, ok } : undefined;
        return resolve({ path: doc.path, sha256: doc.sha256, cached: doc.cached === true, nameHash });
      }
      const message = spawnError
        ? `fetch-weights could not run ${target.program}: ${spawnError.message}`
        : (info?.message ??
          `fetch-weights exited with ${code ?? signal}: ${err.trim().split('\n').pop() || '(no output)'}`);
      reject(new RunnerError(message, spawnError ? null : code, info, last, err));
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

const RECORD_MAX = 4096;

/**
 * Whether a symlinked cache folder owned by `uid` is followed, as the runner's download follows it
 * (download.py's trusted_owner): this user's or root's (a cache moved to a bigger disk), never another
 * user's, perhaps planted in a shared cache. Never on Windows, which has no uid (the runner follows
 * none there either).
 */
function trustedOwner(uid: number): boolean {
  return typeof process.getuid === 'function' && (uid === process.getuid() || uid === 0);
}

/**
 * A source's state in THIS machine's cache (`weights/<rel>` under `cacheWeights`), read as the
 * runner's `weights-status` reads it: a symlinked folder below the cache root followed only when you
 * or root own the link, the file itself never a symlink, regular files only, and of the download's
 * record beside the file (`<file>.sha256.json`) at most 4 KB. No hashing.
 */
export function localCacheState(cacheWeights: string, rel: string): Omit<CacheEntry, 'source'> {
  const file = path.join(cacheWeights, ...rel.split('/'));
  const base: Omit<CacheEntry, 'source'> = { path: file, state: 'missing', bytes: null, partBytes: 0 };
  const lstat = (p: string) => {
    try {
      return lstatSync(p);
    } catch {
      return undefined;
    }
  };
  const stat = (p: string) => {
    try {
      return statSync(p);
    } catch {
      return undefined;
    }
  };
  // The folders from `weights` down, then the file: a folder may be a symlink you or root made, the
  // file may not be one.
  const steps = ['weights', ...rel.split('/')];
  let at = path.dirname(cacheWeights);
  for (const [i, name] of steps.entries()) {
    at = path.join(at, name);
    let st: Stats | undefined = lstat(at);
    if (!st) {
      if (i < steps.length - 1) return base;
      const part = lstat(`${file}.part`);
      return { ...base, partBytes: part?.isFile() ? part.size : 0 };
    }
    if (st.isSymbolicLink()) {
      if (i === steps.length - 1) return { ...base, state: 'unsafe', why: `${name}: a symbolic link, not followed` };
      if (!trustedOwner(st.uid))
        return { ...base, state: 'unsafe', why: `${name}: a symlink neither you nor root own, not followed` };
      st = stat(at); // where it leads; the next steps are named through it
      if (!st) return base; // a dangling link: the download fails on it, nothing is cached
    }
    if (i < steps.length - 1 ? !st.isDirectory() : !st.isFile())
      return { ...base, state: 'unsafe', why: `${name}: not a ${i < steps.length - 1 ? 'folder' : 'regular file'}` };
    if (i === steps.length - 1) {
      const recorded = recordedBytes(`${file}.sha256.json`);
      if (recorded !== undefined && recorded !== st.size)
        return { ...base, state: 'damaged', bytes: st.size, why: `${st.size} bytes, ${recorded} downloaded` };
      return { ...base, state: 'cached', bytes: st.size };
    }
  }
  return base;
}

function recordedBytes(record: string): number | undefined {
  let fd: number;
  try {
    fd = openSync(record, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > RECORD_MAX) return undefined;
    const buf = Buffer.alloc(RECORD_MAX);
    const n = readSync(fd, buf, 0, RECORD_MAX, 0);
    const doc = JSON.parse(buf.subarray(0, n).toString('utf8')) as { bytes?: unknown };
    return typeof doc.bytes === 'number' ? doc.bytes : undefined;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
