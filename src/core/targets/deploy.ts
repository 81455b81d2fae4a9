// Deploys the runner shipped with the extension (`runner/`) to an SSH target's
// `~/.ascend-finetune/runner/<version>/`: one ssh call whose stdin carries the files as JSON,
// unpacked by the target's Python into a fresh folder that then replaces the old one. It is skipped
// when the folder's content hash already matches. Paths travel as argv, quoted once by the ssh layer.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { socketDir, type SshFolders } from './consoleCommand';
import { runRunner } from './runnerCli';
import { sshArgv } from '../ssh/ssh';
import { remoteSetup } from './target';
import { makeTarget, type TargetDef } from './model';

export interface RunnerFile {
  /** POSIX path under the runner folder, e.g. `ascend_finetune/cli.py`. */
  rel: string;
  text: string;
}

/** What the .vsix ships of `runner/` (see .vscodeignore): pyproject.toml, requirements.txt, the package's .py files and its top-level .json (the spec schema). */
export function runnerFiles(runnerRoot: string): RunnerFile[] {
  const files: RunnerFile[] = [];
  for (const name of ['pyproject.toml', 'requirements.txt']) {
    try {
      files.push({ rel: name, text: readFileSync(path.join(runnerRoot, name), 'utf8') });
    } catch {
      // optional
    }
  }
  const walk = (dir: string, rel: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (e.isDirectory() && e.name !== '__pycache__') walk(path.join(dir, e.name), `${rel}/${e.name}`);
      else if (e.isFile() && (e.name.endsWith('.py') || (rel === 'ascend_finetune' && e.name.endsWith('.json'))))
        files.push({ rel: `${rel}/${e.name}`, text: readFileSync(path.join(dir, e.name), 'utf8') });
    }
  };
  walk(path.join(runnerRoot, 'ascend_finetune'), 'ascend_finetune');
  return files;
}

/** sha256 over every file's path and content, in order. */
export function contentHash(files: readonly RunnerFile[]): string {
  const h = createHash('sha256');
  for (const f of files) h.update(f.rel).update('\0').update(f.text).update('\0');
  return h.digest('hex');
}

const CHECK = `import json, os, sys
p = os.path.join(os.path.expanduser(sys.argv[1]), ".content-hash")
try:
    with open(p, encoding="utf-8") as f:
        h = f.read().strip()
except OSError:
    h = None
print(json.dumps({"hash": h}))
`;

const UNPACK = `import json, os, shutil, sys, tempfile
dest = os.path.abspath(os.path.expanduser(sys.argv[1]))
payload = json.loads(sys.stdin.buffer.read().decode("utf-8"))
parent = os.path.dirname(dest)
os.makedirs(parent, exist_ok=True)
tmp = tempfile.mkdtemp(prefix=".deploy-", dir=parent)
for rel, text in payload["files"]:
    parts = rel.split("/")
    if rel.startswith("/") or ".." in parts or "" in parts:
        print(json.dumps({"error": {"kind": "bad_input", "message": "bad path " + rel}}))
        sys.exit(2)
    p = os.path.join(tmp, *parts)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w", encoding="utf-8") as f:
        f.write(text)
with open(os.path.join(tmp, ".content-hash"), "w", encoding="utf-8") as f:
    f.write(payload["hash"])
old = dest + ".old-%d" % os.getpid()
if os.path.lexists(dest):
    os.rename(dest, old)
os.rename(tmp, dest)
shutil.rmtree(old, ignore_errors=True)
print(json.dumps({"path": dest, "files": len(payload["files"])}))
`;

export interface DeployOptions extends SshFolders {
  sshPath?: string;
  timeoutMs?: number;
}

/** The runner folder on the target, or undefined when this target does not get a deployed runner. */
export function deployDir(def: TargetDef): string | undefined {
  return def.kind === 'ssh' && def.ssh?.deploy ? def.ssh.runner.runnerDir : undefined;
}

/** Copies the runner if the target's copy differs; 'current' when it was already there. */
export async function deployRunner(
  def: TargetDef,
  files: readonly RunnerFile[],
  opts: DeployOptions = {},
): Promise<'current' | 'deployed'> {
  const dir = deployDir(def);
  if (dir === undefined || !def.ssh) throw new Error(`${def.label} does not take a deployed runner`);
  const hash = contentHash(files);
  const check = makeTarget(def, { ...opts, launcher: ['-c', CHECK] });
  const have = await runRunner<{ hash: string | null }>(check, [dir], { timeoutMs: opts.timeoutMs });
  if (have.hash === hash) return 'current';

  const argv = sshArgv(def.ssh.dest, [def.ssh.runner.python, '-c', UNPACK, dir], {
    controlDir: socketDir(opts),
    setup: remoteSetup(def.ssh.runner),
  });
  const payload = JSON.stringify({ hash, files: files.map((f) => [f.rel, f.text]) });
  await new Promise<void>((resolve, reject) => {
    const child = spawn(opts.sshPath ?? 'ssh', argv, { stdio: ['pipe', 'pipe', 'pipe'], timeout: opts.timeoutMs });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString('utf8')));
    child.stderr.on('data', (b: Buffer) => (err = (err + b.toString('utf8')).slice(-4000)));
    child.stdin.on('error', () => {}); // a failed login closes stdin early; the exit code says why
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) return resolve();
      const lastErr = err.trim().split('\n').pop() || out.trim() || '(no output)';
      reject(new Error(`copying the runner to ${def.label} failed (exit ${code}): ${lastErr}`));
    });
    child.stdin.end(payload);
  });
  return 'deployed';
}
