// The air-gapped copy: a weights file on this machine goes to an SSH target's weights cache
// (`$ASCEND_FINETUNE_CACHE/weights/<rel>`, default `~/.cache/ascend-finetune/weights/<rel>`, the
// folder the runner's `mindcv:`/`hf-hub:` sources are fetched into: runner/ascend_finetune/models/
// download.py), so a target without internet gets the file over the existing ssh connection.
//
// Two ssh calls running the target's Python: `check` says whether the file is already there (same
// sha256) and how much of a `.part` an earlier copy left; `put` appends the rest, streamed on stdin,
// up to the file's size. Fewer bytes (a cut link, a cancel) keep the `.part` for the next attempt to
// resume; the whole size is checked by sha256 on arrival (a mismatch deletes it), renamed into place
// and given the record a download leaves beside it (`<file>.sha256.json`, runner/ascend_finetune/
// models/cache_folder.py), so `weights-status` lists the copy as a download. More bytes than the size
// delete it too. A put that receives nothing for `idleTimeoutS` (a link that dropped without an end,
// which sshd notices only after hours) keeps what came and exits, letting go of the locks, so the next
// copy resumes instead of finding it busy; what arrives is written at once, so `check` sees all of it.
// Below the cache root the script opens each folder through its parent's descriptor without following
// a symlink, unless the link is this user's or root's (cache_folder.py's rule): another user's link in a
// shared cache answers `unsafe`, nothing written through it. Only the size hashed here is sent, and a
// local file whose size or mtime changed after it was hashed is refused (`changed`). The script
// answers with a status code and values (one JSON line), never a sentence: src/vscode words it.
// Every path and hash travels as argv, quoted once by the ssh layer; nothing is built into a shell
// string.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { socketDir, type SshFolders } from './consoleCommand';
import { backboneOfNamed, cacheRelSource } from '../spec/weightSources';
import { sshArgv } from '../ssh/ssh';
import { remoteSetup } from './target';
import type { TargetDef } from './model';
import { COPY_SCRIPT } from './weightsCopyScript';

/** Why a copy stopped, as values (src/vscode words it; `message` is English, for logs and the CLI). */
export type CopyProblem =
  /** The caller cancelled (`signal`): the `.part` stays on the target and the next copy resumes it. */
  | { code: 'cancelled' }
  /** Fewer bytes than the file's size arrived (the link dropped): the `.part` stays, `part` bytes long. */
  | { code: 'incomplete'; part: number; size: number }
  /** The whole size arrived with another sha256: the target deleted it. */
  | { code: 'sha256-mismatch'; got: string; want: string }
  /** More bytes than the file's size arrived: the target deleted them. */
  | { code: 'too-long'; size: number }
  /** Another copy's process on the target, or a download of the same source there, holds the file's lock. */
  | { code: 'busy' }
  | { code: 'bad-path'; rel: string }
  /**
   * A folder on the way to the file on the target is a symlink another user (`uid`) made: it is not
   * followed and nothing is written through it (the runner's download refuses it alike).
   */
  | { code: 'unsafe'; path: string; uid: number }
  /** The local file's size or modification time changed after its sha256 was taken here. */
  | { code: 'changed'; file: string }
  /** The target's Python could not read or write its cache (`detail`: the OS's message). */
  | { code: 'os-error'; detail: string }
  /** ssh (or the target's Python) ended without an answer: `detail` is the last line of its stderr. */
  | { code: 'ssh-failed'; exit: number | null; detail: string };

export class WeightsCopyError extends Error {
  constructor(
    readonly problem: CopyProblem,
    readonly target: string,
  ) {
    super(`copying weights to ${target}: ${englishProblem(problem)}`);
    this.name = 'WeightsCopyError';
  }
}

function englishProblem(p: CopyProblem): string {
  switch (p.code) {
    case 'cancelled':
      return 'cancelled; the partial copy stays there for the next copy to resume';
    case 'incomplete':
      return `${p.part} of ${p.size} bytes arrived; the partial copy stays there for the next copy to resume`;
    case 'sha256-mismatch':
      return `sha256 on arrival is ${p.got}, expected ${p.want}: the copy was deleted`;
    case 'too-long':
      return `more than ${p.size} bytes arrived: the copy was deleted`;
    case 'busy':
      return 'another copy, or a download, there is still writing this file';
    case 'bad-path':
      return `bad relative path ${p.rel}`;
    case 'unsafe':
      return `${p.path} is a symlink another user (uid ${p.uid}) made: not followed, nothing written; remove it, or point ASCEND_FINETUNE_CACHE there elsewhere`;
    case 'changed':
      return `${p.file} changed here while it was being copied: copy it again once it is complete`;
    case 'os-error':
      return p.detail;
    case 'ssh-failed':
      return `ssh exited with ${p.exit ?? 'a signal'}: ${p.detail}`;
  }
}

export type CopyPhase = 'hash' | 'send';

export interface CopyWeightsOptions extends SshFolders {
  sshPath?: string;
  /** The target's cache folder; default: its $ASCEND_FINETUNE_CACHE, else ~/.cache/ascend-finetune. */
  cacheRoot?: string;
  /** The local file's sha256 when the caller has it (weightsRelPath needed it): not hashed again. */
  sha256?: string;
  /**
   * The local file's size and mtime (fileStamp) taken before `sha256` was: a file that no longer has
   * them changed after it was hashed and is refused ('changed'). Without it, the stamp is taken here.
   */
  stamp?: FileStamp;
  /** The target gives up on a `put` that receives nothing for this long (a dropped link), keeping its `.part`: default 60. */
  idleTimeoutS?: number;
  /**
   * Progress in bytes of the file: while hashing it here ('hash'), then while sending ('send', `done`
   * counts from the start of the file, so a resume starts at its offset); at most every PROGRESS_MS.
   */
  onProgress?: (done: number, total: number, phase: CopyPhase) => void;
  /** Aborting kills the ssh child; the target keeps the `.part` and the next copy resumes it. */
  signal?: AbortSignal;
  /** Attempts after a cut link that moved the `.part` forward (or found it busy): default 3. */
  retries?: number;
  /** Wait before another attempt, in ms: default 2000. */
  retryDelayMs?: number;
}

export interface CopyWeightsResult {
  /** The file's absolute path on the target: what model.pretrained can be set to. */
  remotePath: string;
  sha256: string;
  /** 'current': the target already had this file; otherwise the bytes sent (fewer after a resume). */
  outcome: 'current' | 'copied';
  /** Bytes this copy's own puts moved the file forward (not what another copy added while this one waited on `busy`). */
  sent: number;
  /** The `.part` length an earlier copy had left, where this one started (its first put not refused `busy`). */
  resumedFrom: number;
}

const PROGRESS_MS = 200;

/** A file's size and modification time, to see that it did not change while it was hashed and sent. */
export interface FileStamp {
  size: number;
  mtimeNs: bigint;
}

export async function fileStamp(file: string): Promise<FileStamp> {
  const st = await fsp.stat(file, { bigint: true });
  return { size: Number(st.size), mtimeNs: st.mtimeNs };
}

const sameStamp = (a: FileStamp, b: FileStamp) => a.size === b.size && a.mtimeNs === b.mtimeNs;

/** How many hex digits of the sha256 name a file from outside this machine's cache. */
export const LOCAL_HASH_HEX = 12;

/**
 * Where a local weights file goes under the target's `weights/` folder: a file from this machine's
 * cache keeps its place there (so `mindcv:`/`hf-hub:` sources find it on the target without a
 * download); any other file goes to `local/<first 12 hex of its sha256>/<file name>`, so two
 * different files of one name do not replace each other there.
 */
export function weightsRelPath(localFile: string, localCacheWeights: string, sha256: string): string {
  const rel = path.relative(localCacheWeights, localFile);
  if (rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel)) return rel.split(path.sep).join('/');
  if (!/^[0-9a-f]{64}$/.test(sha256)) throw new Error(`not a sha256: ${sha256}`);
  return `local/${sha256.slice(0, LOCAL_HASH_HEX)}/${path.basename(localFile)}`;
}

/**
 * The value model.pretrained gets for a file copied to `rel` in the target's weights cache: a place
 * a named source is fetched to (a file of this machine's cache keeps its place: weightsRelPath) is
 * that source's name (`mindcv:<model>`, `hf-hub:<org>/<repo>[:<file>]`), which the runner finds in
 * the target's cache without a request and loads with that source's own preprocessing (a path would
 * be loaded as a plain file, with another preprocessing); any other file, its path there. A name the
 * runner would refuse (a mindcv model it does not offer as a backbone) stays a path.
 */
export function pretrainedValue(rel: string, remotePath: string): string {
  const named = cacheRelSource(rel);
  return named !== undefined && backboneOfNamed(named) !== undefined ? named : remotePath;
}

/** This machine's weights cache, as the runner computes it. */
export function localCacheWeights(env: NodeJS.ProcessEnv, home: string): string {
  return path.join(path.resolve(env.ASCEND_FINETUNE_CACHE || path.join(home, '.cache', 'ascend-finetune')), 'weights');
}

/** The file's sha256; an aborted `signal` stops it (its AbortError). */
export async function sha256File(file: string, onBytes?: (n: number) => void, signal?: AbortSignal): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) {
    signal?.throwIfAborted();
    h.update(chunk as Buffer);
    onBytes?.((chunk as Buffer).length);
  }
  return h.digest('hex');
}

/** Calls `report` at most every PROGRESS_MS, and always with `force`. */
function throttled(report?: (done: number, total: number, phase: CopyPhase) => void) {
  let at = 0;
  return (done: number, total: number, phase: CopyPhase, force = false) => {
    if (!report) return;
    const now = Date.now();
    if (!force && now - at < PROGRESS_MS) return;
    at = now;
    report(done, total, phase);
  };
}

type Answer = Record<string, unknown> & { status: string };

/** The script's answer (its last stdout line), or the reason it gave none. */
export function readAnswer(code: number | null, stdout: string, stderr: string): Answer | CopyProblem {
  const last = stdout.trim().split('\n').pop() ?? '';
  let doc: unknown;
  try {
    doc = JSON.parse(last);
  } catch {
    doc = undefined;
  }
  const d = doc as Record<string, unknown> | undefined;
  const num = (v: unknown) => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined);
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  switch (d && typeof d === 'object' ? d.status : undefined) {
    case 'ok':
    case 'done':
      if (code === 0 && typeof d!.dest === 'string') return d as Answer;
      break;
    case 'incomplete': {
      const part = num(d!.part);
      const size = num(d!.size);
      if (part !== undefined && size !== undefined) return { code: 'incomplete', part, size };
      break;
    }
    case 'sha256-mismatch': {
      const got = str(d!.got);
      const want = str(d!.want);
      if (got !== undefined && want !== undefined) return { code: 'sha256-mismatch', got, want };
      break;
    }
    case 'too-long': {
      const size = num(d!.size);
      if (size !== undefined) return { code: 'too-long', size };
      break;
    }
    case 'busy':
      return { code: 'busy' };
    case 'bad-path':
      return { code: 'bad-path', rel: str(d!.rel) ?? '' };
    case 'unsafe': {
      const where = str(d!.path);
      const uid = num(d!.uid);
      if (where !== undefined && uid !== undefined) return { code: 'unsafe', path: where, uid };
      break;
    }
    case 'os-error':
      return { code: 'os-error', detail: str(d!.detail) ?? '' };
  }
  const detail = stderr.trim().split('\n').pop() || last || '';
  return { code: 'ssh-failed', exit: code, detail };
}

function runScript(
  def: TargetDef,
  args: string[],
  opts: CopyWeightsOptions,
  input?: { file: string; start: number; size: number },
): Promise<Answer> {
  if (def.kind !== 'ssh' || !def.ssh) throw new Error(`${def.label} is not an SSH target`);
  const fail = (p: CopyProblem) => new WeightsCopyError(p, def.label);
  if (opts.signal?.aborted) return Promise.reject(fail({ code: 'cancelled' }));
  const argv = sshArgv(def.ssh.dest, [def.ssh.runner.python, '-c', COPY_SCRIPT, ...args], {
    controlDir: socketDir(opts),
    setup: remoteSetup(def.ssh.runner),
  });
  return new Promise((resolve, reject) => {
    const child = spawn(opts.sshPath ?? 'ssh', argv, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let cancelled = false;
    let spawnError: Error | undefined;
    const onAbort = () => {
      cancelled = true;
      child.kill('SIGTERM');
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (b: Buffer) => (out = (out + b.toString('utf8')).slice(-64_000)));
    child.stderr.on('data', (b: Buffer) => (err = (err + b.toString('utf8')).slice(-4000)));
    child.stdin.on('error', () => {}); // a failed login or a cut link closes stdin early; the answer says why
    child.on('error', (e) => (spawnError = e));
    // Exactly the file's size as hashed (`end` is inclusive): bytes appended since are not sent, and a
    // whole `.part` left there needs none.
    const stream =
      input && input.start < input.size
        ? createReadStream(input.file, { start: input.start, end: input.size - 1 })
        : undefined;
    child.on('close', (code) => {
      opts.signal?.removeEventListener('abort', onAbort);
      stream?.destroy();
      if (cancelled) return reject(fail({ code: 'cancelled' }));
      if (spawnError) return reject(fail({ code: 'ssh-failed', exit: null, detail: spawnError.message }));
      const got = readAnswer(code, out, err);
      if ('status' in got) return resolve(got);
      reject(fail(got));
    });
    if (!input || !stream) return void child.stdin.end();
    const progress = throttled(opts.onProgress);
    let done = input.start;
    progress(done, input.size, 'send', true);
    stream.on('data', (b) => {
      done += b.length;
      progress(done, input.size, 'send', done >= input.size);
    });
    stream.on('error', (e) => {
      child.kill();
      reject(e);
    });
    stream.pipe(child.stdin);
  });
}

/**
 * Copies `localFile` to the target's weights cache at `rel`, resuming a partial copy; sha256 checked
 * there. A cut link that moved the target's `.part` forward is tried again from where it stopped (up
 * to `retries` times); every other problem throws a WeightsCopyError.
 */
export async function copyWeightsToTarget(
  def: TargetDef,
  localFile: string,
  rel: string,
  opts: CopyWeightsOptions = {},
): Promise<CopyWeightsResult> {
  const fail = (p: CopyProblem) => new WeightsCopyError(p, def.label);
  const now = await fileStamp(localFile);
  const stamp = opts.sha256 && opts.stamp ? opts.stamp : now;
  const { size } = stamp;
  // A file that is no longer the one hashed (it grew, or was rewritten) is refused before it is sent.
  const unchanged = (at: FileStamp) => {
    if (!sameStamp(stamp, at)) throw fail({ code: 'changed', file: localFile });
  };
  unchanged(now);
  let sha = opts.sha256;
  if (!sha) {
    const progress = throttled(opts.onProgress);
    let hashed = 0;
    progress(0, size, 'hash', true);
    try {
      sha = await sha256File(localFile, (n) => progress((hashed += n), size, 'hash', hashed >= size), opts.signal);
    } catch (e) {
      if (opts.signal?.aborted) throw fail({ code: 'cancelled' });
      throw e;
    }
    unchanged(await fileStamp(localFile));
  }
  const root = opts.cacheRoot ?? '';
  const retries = opts.retries ?? 3;
  // Only this copy's own puts count: while another copy's process holds the .part (`busy`), the
  // bytes it adds are not this copy's, and the wait does not move the "moved forward" mark (it does
  // use one of `retries`). Bytes another copy adds during this copy's retry sleep are counted (rare).
  let first: number | undefined; // where the first own put started
  let own: number | undefined; // where the last own put that failed started (its end: the next check's)
  let sent = 0;
  let last = -1;
  const idle = String(opts.idleTimeoutS ?? 60);
  for (let attempt = 0; ; attempt++) {
    if (attempt > 0) unchanged(await fileStamp(localFile));
    const have = await runScript(def, ['check', root, rel, sha], opts);
    const dest = String(have.dest);
    if (have.sha256 === sha) return { remotePath: dest, sha256: sha, outcome: 'current', sent: 0, resumedFrom: 0 };
    const part = typeof have.part === 'number' && have.part <= size ? have.part : 0;
    if (own !== undefined) sent += Math.max(0, part - own);
    own = undefined;
    try {
      const done = await runScript(def, ['put', root, rel, sha, String(part), String(size), idle], opts, {
        file: localFile,
        start: part,
        size,
      });
      first ??= part;
      return {
        remotePath: String(done.dest),
        sha256: sha,
        outcome: 'copied',
        sent: sent + size - part,
        resumedFrom: first,
      };
    } catch (e) {
      const p = e instanceof WeightsCopyError ? e.problem : undefined;
      const busy = p?.code === 'busy';
      // Another try only while the link moves the file forward, or an earlier process lets go of it.
      const again =
        attempt < retries && (busy || ((p?.code === 'incomplete' || p?.code === 'ssh-failed') && part > last));
      if (!again) throw e;
      if (!busy) {
        first ??= part;
        own = last = part;
      }
      await sleep(opts.retryDelayMs ?? 2000, undefined, { signal: opts.signal }).catch(() => {
        throw new WeightsCopyError({ code: 'cancelled' }, def.label);
      });
    }
  }
}

/** A hub weight's preprocessing: its repository's config.json, beside the weights in the cache. */
export const HUB_CONFIG = 'config.json';

/**
 * The config.json that goes with a weights file of this machine's hub cache (`hf-hub/<org>/<repo>/
 * main/<file>`), where the runner reads it from on the target (models/download.py); undefined for
 * any other file. `present`: whether this machine has it (fetch-weights fetches it beside the weights).
 */
export function hubConfigOf(
  localFile: string,
  rel: string,
): { file: string; rel: string; present: boolean } | undefined {
  if (!rel.startsWith('hf-hub/') || path.posix.basename(rel) === HUB_CONFIG) return undefined;
  const file = path.join(path.dirname(localFile), HUB_CONFIG);
  return { file, rel: path.posix.join(path.posix.dirname(rel), HUB_CONFIG), present: existsSync(file) };
}

export interface CopyWithConfigResult extends CopyWeightsResult {
  /** The hub config copied with the weights; 'missing': a hub weight whose config this machine lacks. */
  config?: CopyWeightsResult | 'missing';
}

/**
 * Copies the weights and, for a hub weight, its config.json by the same checked, resumable path, so
 * an air-gapped target's run uses the weights' own preprocessing instead of falling back to a preset.
 */
export async function copyWeightsWithConfig(
  def: TargetDef,
  localFile: string,
  rel: string,
  opts: CopyWeightsOptions = {},
): Promise<CopyWithConfigResult> {
  const weights = await copyWeightsToTarget(def, localFile, rel, opts);
  const cfg = hubConfigOf(localFile, rel);
  if (!cfg) return weights;
  if (!cfg.present) return { ...weights, config: 'missing' };
  const config = await copyWeightsToTarget(def, cfg.file, cfg.rel, {
    ...opts,
    sha256: undefined,
    stamp: undefined,
    onProgress: undefined,
  });
  return { ...weights, config };
}
