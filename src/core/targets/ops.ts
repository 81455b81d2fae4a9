// Small file operations on a target that the runner's CLI has no command for: list folders (the
// wizard's remote folder picker), write the spec file the run is launched from, delete a finished
// run's directory. Each is a short Python program run by the target's own Python (`python -c CODE
// ARG...`), through the same transport as the runner, so paths travel as argv and are quoted once
// by the ssh layer; nothing here is shell text. Each prints JSON like a runner command.
import { runRunner, type RunOptions } from './runnerCli';
import type { Target } from './target';

/** Builds the transport for a target with `python -c code` instead of `python -m ascend_finetune`. */
export type PythonTargetFactory = (launcher: readonly string[]) => Target;

const PRELUDE = `import json, os, sys
def fail(kind, message):
    print(json.dumps({"error": {"kind": kind, "message": message}}))
    sys.exit(2)
`;

const LIST_DIRS =
  PRELUDE +
  `d = os.path.abspath(os.path.expanduser(sys.argv[1] or "~"))
exts = tuple(e.lower() for e in sys.argv[2:])
if not os.path.isdir(d):
    fail("not_a_folder", "no such folder: " + d)
dirs, files = [], []
try:
    names = sorted(os.listdir(d))
except OSError as e:
    fail("unreadable", str(e))
for n in names:
    p = os.path.join(d, n)
    if os.path.isdir(p):
        dirs.append(n)
    elif exts and n.lower().endswith(exts):
        files.append(n)
print(json.dumps({"path": d, "parent": os.path.dirname(d), "dirs": dirs, "files": files}))
`;

const WRITE_FILE =
  PRELUDE +
  `p = os.path.abspath(os.path.expanduser(sys.argv[1]))
os.makedirs(os.path.dirname(p), exist_ok=True)
tmp = p + ".tmp"
with open(tmp, "w", encoding="utf-8") as f:
    f.write(sys.argv[2])
os.replace(tmp, p)
print(json.dumps({"path": p}))
`;

const DELETE_RUN =
  PRELUDE +
  `import shutil
d = os.path.abspath(os.path.expanduser(sys.argv[1]))
status = os.path.join(d, "status.json")
if not os.path.isfile(status):
    fail("not_a_run", "not a run directory (no status.json): " + d)
try:
    with open(status, encoding="utf-8") as f:
        st = json.load(f)
except (OSError, ValueError):
    st = {}
pid = st.get("pid") if isinstance(st, dict) else None
if isinstance(st, dict) and st.get("state") == "running" and isinstance(pid, int) and pid > 0:
    try:
        os.kill(pid, 0)
        fail("running", "the run is still running (pid %d): stop it first" % pid)
    except ProcessLookupError:
        pass
    except PermissionError:
        fail("running", "the run's process %d exists: stop it first" % pid)
shutil.rmtree(d)
print(json.dumps({"deleted": d}))
`;

export interface FolderListing {
  /** The folder listed, absolute on the target (`~` expanded). */
  path: string;
  parent: string;
  /** Sub-folder names, sorted. */
  dirs: string[];
  /** File names ending in one of the asked extensions, sorted. */
  files: string[];
}

/** Lists `dir` on the target (`''` or `~`: the home folder), with files that end in `exts`. */
export function listFolder(
  target: PythonTargetFactory,
  dir: string,
  exts: readonly string[] = [],
  opts?: RunOptions,
): Promise<FolderListing> {
  return runRunner<FolderListing>(target(['-c', LIST_DIRS]), [dir, ...exts], opts);
}

/** Writes `text` to `file` on the target (parent folders created, atomic); resolves to its absolute path. */
export async function writeTargetFile(
  target: PythonTargetFactory,
  file: string,
  text: string,
  opts?: RunOptions,
): Promise<string> {
  return (await runRunner<{ path: string }>(target(['-c', WRITE_FILE]), [file, text], opts)).path;
}

/** Deletes a run directory on the target; refuses a folder without status.json and a run whose process lives. */
export async function deleteRunDir(target: PythonTargetFactory, runDir: string, opts?: RunOptions): Promise<string> {
  return (await runRunner<{ deleted: string }>(target(['-c', DELETE_RUN]), [runDir], opts)).deleted;
}
