// The air-gapped copy: a weights file on this machine goes to an SSH target's weights cache
// (`$ASCEND_FINETUNE_CACHE/weights/<rel>`, default `~/.cache/ascend-finetune/weights/<rel>`, the
// folder the runner's `mindcv:`/`hf-hub:` sources are fetched into: runner/ascend_finetune/models/
// download.py), so a target without internet gets the file over the existing ssh connection.
//
// Two ssh calls running the target's Python: `check` says whether the file is already there (same
// sha256) and how much of a `.part` an earlier copy left; `put` appends the rest, streamed on stdin,
// checks the whole file's sha256 on arrival (a mismatch deletes it), renames it into place and writes
// the record a download leaves beside it (`<file>.sha256.json`, runner/ascend_finetune/models/
// download.py), so `weights-status` lists the copy as a download. Every path and hash travels as
// argv, quoted once by the ssh layer; nothing is built into a shell string.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { socketDir, type SshFolders } from './consoleCommand';
import { sshArgv } from '../ssh/ssh';
import { remoteSetup } from './target';
import type { TargetDef } from './model';

const SCRIPT = String.raw`
import hashlib, json, os, sys
mode, root, rel, want = sys.argv[1:5]
parts = rel.split("/")
if rel.startswith("/") or ".." in parts or "" in parts:
    print(json.dumps({"error": "bad relative path " + rel})); sys.exit(2)
if not root:
    root = os.environ.get("ASCEND_FINETUNE_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "ascend-finetune")
dest = os.path.join(os.path.abspath(os.path.expanduser(root)), "weights", *parts)
part = dest + ".part"
def sha(p):
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()
if mode == "check":
    have = sha(dest) if os.path.isfile(dest) and not os.path.islink(dest) else None
    size = os.path.getsize(part) if os.path.isfile(part) and not os.path.islink(part) else 0
    print(json.dumps({"dest": dest, "sha256": have, "part": size})); sys.exit(0)
offset = int(sys.argv[5])
os.makedirs(os.path.dirname(dest), exist_ok=True)
fd = os.open(part, os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
try:
    os.ftruncate(fd, offset)
    os.lseek(fd, offset, os.SEEK_SET)
    for b in iter(lambda: sys.stdin.buffer.read(1 << 20), b""):
        os.write(fd, b)
finally:
    os.close(fd)
got = sha(part)
if got != want:
    os.unlink(part)
    print(json.dumps({"error": "sha256 on arrival is " + got + ", expected " + want + ": the copy was deleted"})); sys.exit(1)
os.replace(part, dest)
st = os.stat(dest, follow_symlinks=False)
rec = dest + ".sha256.json"
tmp = rec + "." + str(os.getpid()) + ".tmp"
fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
try:
    os.write(fd, json.dumps({"sha256": got, "bytes": st.st_size, "mtime_ns": st.st_mtime_ns}).encode())
finally:
    os.close(fd)
os.replace(tmp, rec)
print(json.dumps({"dest": dest, "sha256": got}))
`;

export interface CopyWeightsOptions extends SshFolders {
  sshPath?: string;
  /** The target's cache folder; default: its $ASCEND_FINETUNE_CACHE, else ~/.cache/ascend-finetune. */
  cacheRoot?: string;
  /** Bytes sent so far (from the resume offset), for a progress notification. */
  onProgress?: (sent: number, total: number) => void;
}

export interface CopyWeightsResult {
  /** The file's absolute path on the target: what model.pretrained can be set to. */
  remotePath: string;
  sha256: string;
  /** 'current': the target already had this file; otherwise the bytes sent (fewer after a resume). */
  outcome: 'current' | 'copied';
  sent: number;
}

/**
 * Where a local weights file goes under the target's `weights/` folder: a file from this machine's
 * cache keeps its place there (so `mindcv:`/`hf-hub:` sources find it on the target without a
 * download); any other file goes to `local/<file name>`.
 */
export function weightsRelPath(localFile: string, localCacheWeights: string): string {
  const rel = path.relative(localCacheWeights, localFile);
  if (rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel)) return rel.split(path.sep).join('/');
  return `local/${path.basename(localFile)}`;
}

/** This machine's weights cache, as the runner computes it. */
export function localCacheWeights(env: NodeJS.ProcessEnv, home: string): string {
  return path.join(path.resolve(env.ASCEND_FINETUNE_CACHE || path.join(home, '.cache', 'ascend-finetune')), 'weights');
}

export async function sha256File(file: string, onBytes?: (n: number) => void): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) {
    h.update(chunk as Buffer);
    onBytes?.((chunk as Buffer).length);
  }
  return h.digest('hex');
}

function runScript(
  def: TargetDef,
  args: string[],
  opts: CopyWeightsOptions,
  input?: { file: string; start: number },
): Promise<Record<string, unknown>> {
  if (def.kind !== 'ssh' || !def.ssh) throw new Error(`${def.label} is not an SSH target`);
  const argv = sshArgv(def.ssh.dest, [def.ssh.runner.python, '-c', SCRIPT, ...args], {
    controlDir: socketDir(opts),
    setup: remoteSetup(def.ssh.runner),
  });
  return new Promise((resolve, reject) => {
    const child = spawn(opts.sshPath ?? 'ssh', argv, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString('utf8')));
    child.stderr.on('data', (b: Buffer) => (err = (err + b.toString('utf8')).slice(-4000)));
    child.stdin.on('error', () => {}); // a failed login closes stdin early; the exit code says why
    child.on('error', reject);
    child.on('close', (code) => {
      const last = out.trim().split('\n').pop() ?? '';
      let doc: Record<string, unknown> | undefined;
      try {
        doc = JSON.parse(last) as Record<string, unknown>;
      } catch {
        doc = undefined;
      }
      if (code === 0 && doc && typeof doc.dest === 'string') return resolve(doc);
      const why = typeof doc?.error === 'string' ? doc.error : err.trim().split('\n').pop() || last || '(no output)';
      reject(new Error(`copying weights to ${def.label} failed (exit ${code}): ${why}`));
    });
    if (!input) return void child.stdin.end();
    const stream = createReadStream(input.file, { start: input.start });
    stream.on('error', (e) => {
      child.kill();
      reject(e);
    });
    stream.pipe(child.stdin);
  });
}

/** Copies `localFile` to the target's weights cache at `rel`, resuming a partial copy; sha256 checked there. */
export async function copyWeightsToTarget(
  def: TargetDef,
  localFile: string,
  rel: string,
  opts: CopyWeightsOptions = {},
): Promise<CopyWeightsResult> {
  const sha = await sha256File(localFile);
  const root = opts.cacheRoot ?? '';
  const have = await runScript(def, ['check', root, rel, sha], opts);
  const dest = String(have.dest);
  if (have.sha256 === sha) return { remotePath: dest, sha256: sha, outcome: 'current', sent: 0 };
  const { size } = await fsp.stat(localFile);
  const part = typeof have.part === 'number' && have.part <= size ? have.part : 0;
  opts.onProgress?.(0, size - part);
  const done = await runScript(def, ['put', root, rel, sha, String(part)], opts, { file: localFile, start: part });
  opts.onProgress?.(size - part, size - part);
  return { remotePath: String(done.dest), sha256: sha, outcome: 'copied', sent: size - part };
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
  return { ...weights, config: await copyWeightsToTarget(def, cfg.file, cfg.rel, { ...opts, onProgress: undefined }) };
}
