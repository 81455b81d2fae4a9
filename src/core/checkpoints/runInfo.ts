// Everything the Checkpoints view needs about one run, read on its target in one call: the text of
// checkpoints.json, the `checkpoint` events (only when the manifest lacks something), the spec, the classes, and
// the files next to the checkpoints (`<ckpt>.eval.json` results, exported `.mindir`/`.onnx`). Like
// targets/ops.ts it is a short Python program run by the target's own Python, with the run directory
// as argv, so nothing is shell text and it works the same over ssh.
import { runRunner, type RunOptions } from '../targets/runnerCli';
import { mergeCheckpointEvents, parseManifest, type CheckpointEntry, type ManifestProblem } from './manifest';
import { toEvalResult, type EvalResult, type ExportFormat } from './client';
import type { PythonTargetFactory } from '../targets/ops';

/** Events files above this are not scanned for checkpoint events (the manifest still is read). */
const MAX_EVENTS_BYTES = 256 * 1024 * 1024;

const READ_RUN = `import json, os, sys
d = os.path.abspath(os.path.expanduser(sys.argv[1]))
max_events = int(sys.argv[2])
MAX_EVAL_BYTES = 64 << 20
if not os.path.isdir(d):
    print(json.dumps({"error": {"kind": "not_a_run", "message": "no such run directory: " + d}}))
    sys.exit(2)
def text(p):
    try:
        with open(os.path.join(d, p), encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return None
def obj(p):
    t = text(p)
    if t is None:
        return None
    try:
        return json.loads(t)
    except ValueError:
        return None
manifest = text("checkpoints.json")
try:
    entries = json.loads(manifest) if manifest is not None else None
except ValueError:
    entries = None
# The event log only fills gaps: a complete manifest (the usual case) spares reading it.
complete = isinstance(entries, list) and all(
    isinstance(e, dict) and isinstance(e.get("metrics"), dict) and isinstance(e.get("sha256"), str) for e in entries)
events = []
ep = os.path.join(d, "events.jsonl")
try:
    if not complete and os.path.getsize(ep) <= max_events:
        with open(ep, "rb") as f:
            for line in f:
                if b'"checkpoint"' not in line or not line.endswith(b"\\n"):
                    continue
                try:
                    e = json.loads(line)
                except ValueError:
                    continue
                if isinstance(e, dict) and e.get("type") == "checkpoint":
                    events.append(e)
except OSError:
    pass
files = []
evals = {}
cd = os.path.join(d, "checkpoints")
try:
    names = sorted(os.listdir(cd))
except OSError:
    names = []
for n in names:
    p = os.path.join(cd, n)
    if n.startswith(".") or not os.path.isfile(p):
        continue
    files.append({"name": n, "bytes": os.path.getsize(p), "mtime": os.path.getmtime(p)})
    # an eval result keeps up to 2000 per-image predictions (~250 KB); a file far above that is not ours
    if n.endswith(".eval.json") and os.path.getsize(p) <= MAX_EVAL_BYTES:
        evals[n] = obj(os.path.join("checkpoints", n))
print(json.dumps({"run_dir": d, "manifest": manifest, "events": events, "spec": obj("spec.json"),
                  "classes": obj("classes.json"), "status": obj("status.json"), "files": files, "evals": evals}))
`;

/** A file exported from a checkpoint, found next to it. */
export interface ExportedFile {
  /** Relative to the run directory. */
  file: string;
  format: ExportFormat;
  bytes: number;
}

/** One checkpoint with what was made from it. */
export interface CheckpointDetail extends CheckpointEntry {
  exports: ExportedFile[];
  /** The last `eval` kept with the checkpoint (`<ckpt>.eval.json`), if any. */
  lastEval?: EvalResult;
}

export interface RunCheckpoints {
  runDir: string;
  /** The run's resolved spec.json (for Resume and Fine-tune from), or null when unreadable. */
  spec: Record<string, unknown> | null;
  name: string | null;
  backbone: string | null;
  /** `model.pretrained` of the spec: the checkpoints' common parent. null = random initialization. */
  pretrained: string | null;
  freeze: string | null;
  /** `data.val`, null when the run splits its training folder. */
  valData: string | null;
  trainData: string | null;
  imageSize: number | null;
  classes: string[];
  checkpoints: CheckpointDetail[];
  problems: ManifestProblem[];
  /** Files in checkpoints/ that no manifest entry names (e.g. left by a crash between rewrite and delete). */
  unlisted: string[];
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** Turns the helper's output into the view's model. Pure, so it is tested on recorded output. */
export function toRunCheckpoints(out: unknown): RunCheckpoints {
  const o = isObj(out) ? out : {};
  const runDir = typeof o.run_dir === 'string' ? o.run_dir : '';
  const manifestText = typeof o.manifest === 'string' ? o.manifest : undefined;
  const parsed = parseManifest(manifestText);
  const readable = manifestText !== undefined && !parsed.problems.some((p) => p.index === -1);
  const merged = mergeCheckpointEvents(parsed, Array.isArray(o.events) ? o.events : [], readable);
  const spec = isObj(o.spec) ? o.spec : {};
  const model = isObj(spec.model) ? spec.model : {};
  const data = isObj(spec.data) ? spec.data : {};
  const files = (Array.isArray(o.files) ? o.files : []).filter(isObj).filter((f) => typeof f.name === 'string');
  const fileBytes = new Map(
    files.map((f) => [`checkpoints/${f.name as string}`, typeof f.bytes === 'number' ? f.bytes : 0]),
  );
  const evals = isObj(o.evals) ? o.evals : {};
  const claimed = new Set<string>();
  const checkpoints = merged.entries.map((e): CheckpointDetail => {
    claimed.add(e.file);
    const stem = e.file.replace(/\.(ckpt|safetensors)$/, '');
    const exports: ExportedFile[] = [];
    for (const format of ['mindir', 'onnx'] as const) {
      const f = `${stem}.${format}`;
      const bytes = fileBytes.get(f);
      if (bytes !== undefined) {
        exports.push({ file: f, format, bytes });
        claimed.add(f);
      }
    }
    const evalName = `${e.file.split('/').pop()}.eval.json`;
    const evalFile = `checkpoints/${evalName}`;
    let lastEval: EvalResult | undefined;
    if (fileBytes.has(evalFile)) claimed.add(evalFile);
    if (isObj(evals[evalName])) {
      try {
        lastEval = toEvalResult(evals[evalName]);
      } catch {
        lastEval = undefined; // a damaged result is simply not shown
      }
    }
    return { ...e, exports, ...(lastEval ? { lastEval } : {}) };
  });
  const unlisted = [...fileBytes.keys()].filter((f) => !claimed.has(f) && /\.(ckpt|safetensors)$/.test(f));
  return {
    runDir,
    spec: isObj(o.spec) ? o.spec : null,
    name: str(spec.name),
    backbone: str(model.backbone),
    pretrained: str(model.pretrained),
    freeze: str(model.freeze),
    valData: str(data.val),
    trainData: str(data.train),
    imageSize: typeof data.image_size === 'number' ? data.image_size : null,
    classes: Array.isArray(o.classes) ? o.classes.filter((c): c is string => typeof c === 'string') : [],
    checkpoints,
    problems: merged.problems,
    unlisted,
  };
}

/** Reads one run's checkpoints on its target. */
export async function readRunCheckpoints(
  target: PythonTargetFactory,
  runDir: string,
  opts?: RunOptions,
): Promise<RunCheckpoints> {
  return toRunCheckpoints(await runRunner(target(['-c', READ_RUN]), [runDir, String(MAX_EVENTS_BYTES)], opts));
}
