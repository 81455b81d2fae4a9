// Install mindcv on Target: the carried wheels (checked against their pins) go to the target, over
// the existing ssh connection with their sha256 checked on arrival, or stay where they are on this
// machine; then the target's own Python runs `pip install --no-index --find-links`. PyYAML comes
// from the box when it has it, else from the box's own index, else as the platform wheel a Python
// on this machine downloads; failing all three, the error names the commands to run by hand.
// Every command is an argv: spawned directly here, quoted once by the ssh layer there.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { socketDir, type SshFolders } from './consoleCommand';
import {
  manualCommands,
  MindcvInstallError,
  MINDCV_REQUIREMENTS,
  parseProbe,
  pipDownloadArgv,
  pipInstallArgv,
  pipOnlineArgv,
  PROBE,
  PYYAML_REQUIREMENT,
  REMOTE_WHEELS_DIR,
  verifyCarriedWheels,
  wheelRequirement,
  type TargetPython,
} from './mindcvPlan';
import type { TargetDef } from './model';
import { remoteSetup } from './target';
import { sshArgv } from '../ssh/ssh';
import type { Translate } from '../l10n';

export type InstallStep = 'verify' | 'probe' | 'pyyaml-online' | 'pyyaml-download' | 'copy' | 'install';

export interface InstallMindcvOptions extends SshFolders {
  sshPath?: string;
  /** The carried wheels: the extension's runner/wheels/. */
  wheelsDir: string;
  /** Pythons on this machine that may run `pip download` for the target, tried in order. */
  localPythons: readonly string[];
  /** The wheels' folder on an SSH target; default ~/.ascend-finetune/wheels. */
  remoteDir?: string;
  signal?: AbortSignal;
  onStep?: (step: InstallStep) => void;
  /** Each command's argv and how it ended, for the log. */
  onCommand?: (argv: readonly string[], code: number | null, output: string) => void;
  /** The display language of the manual commands' notes (English by default). */
  t?: Translate;
}

export interface InstallMindcvResult {
  python: TargetPython;
  /** Where PyYAML came from. */
  pyyaml: 'present' | 'online' | 'downloaded';
  /** The folders pip was pointed at, on the target. */
  findLinks: string[];
}

interface Ran {
  code: number | null;
  out: string;
  err: string;
}

function python(def: TargetDef): string {
  const p = def.kind === 'ssh' ? def.ssh?.runner.python : def.local?.python;
  if (!p) throw new Error(`target ${def.id} has no Python`);
  return p;
}

/** Runs `argv` on this machine (no shell) or on the target (quoted once, after the target's set-up lines). */
function run(
  where: TargetDef | 'here',
  argv: readonly string[],
  opts: InstallMindcvOptions,
  stdin?: Buffer,
): Promise<Ran> {
  let file: string;
  let args: string[];
  let env: NodeJS.ProcessEnv = process.env;
  if (where !== 'here' && where.kind === 'ssh' && where.ssh) {
    file = opts.sshPath ?? 'ssh';
    args = sshArgv(where.ssh.dest, argv, { controlDir: socketDir(opts), setup: remoteSetup(where.ssh.runner) });
  } else {
    [file, ...args] = argv;
    if (where !== 'here') env = { ...process.env, ...where.local?.env };
  }
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted) return reject(cancelled());
    const child = spawn(file, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const abort = () => child.kill('SIGTERM'); // ssh's end closes the remote session
    opts.signal?.addEventListener('abort', abort, { once: true });
    child.stdout.on('data', (b: Buffer) => (out += b.toString('utf8')));
    child.stderr.on('data', (b: Buffer) => (err = (err + b.toString('utf8')).slice(-8000)));
    child.stdin.on('error', () => {}); // a failed login closes stdin early; the exit code says why
    child.on('error', (e) => resolve({ code: null, out, err: `${err}${e.message}` }));
    child.on('close', (code) => {
      opts.signal?.removeEventListener('abort', abort);
      if (opts.signal?.aborted) return reject(cancelled());
      opts.onCommand?.(argv, code, `${out}${err}`.slice(-4000));
      resolve({ code, out, err });
    });
    child.stdin.end(stdin);
  });
}

function cancelled(): Error {
  const e = new Error('Install mindcv on Target was cancelled');
  e.name = 'AbortError';
  return e;
}

function lastLine(r: Ran): string {
  const lines = `${r.err}\n${r.out}`
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  return lines.find((l) => /^ERROR:/.test(l)) ?? lines.pop() ?? `exit ${r.code}`;
}

/**
 * Writes each wheel into `dir` on the target, after checking its sha256 there against the one sent
 * with it (a mismatch writes nothing); prints the folder's absolute path.
 */
export const PUT_WHEELS = String.raw`
import base64, hashlib, json, os, sys, tempfile
dest = os.path.abspath(os.path.expanduser(sys.argv[1]))
wheels = json.loads(sys.stdin.buffer.read().decode("ascii"))
for name, want, data in wheels:
    if "/" in name or name.startswith(".") or not name.endswith(".whl"):
        print(json.dumps({"error": "bad wheel name " + name})); sys.exit(2)
    got = hashlib.sha256(base64.b64decode(data)).hexdigest()
    if got != want:
        print(json.dumps({"error": name + " arrived with sha256 " + got + ", expected " + want + ": nothing was written"})); sys.exit(1)
os.makedirs(dest, exist_ok=True)
for name, want, data in wheels:
    fd, tmp = tempfile.mkstemp(prefix=".part-", dir=dest)
    with os.fdopen(fd, "wb") as f:
        f.write(base64.b64decode(data))
    os.replace(tmp, os.path.join(dest, name))
print(json.dumps({"dir": dest, "files": [w[0] for w in wheels]}))
`;

export interface WheelToSend {
  name: string;
  sha256: string;
  body: Buffer;
}

/** Copies wheels to an SSH target's `dir`; resolves to the folder's absolute path there. */
export async function putWheels(
  def: TargetDef,
  wheels: readonly WheelToSend[],
  dir: string,
  opts: InstallMindcvOptions,
): Promise<string> {
  const payload = JSON.stringify(wheels.map((w) => [w.name, w.sha256, w.body.toString('base64')]));
  const r = await run(def, [python(def), '-c', PUT_WHEELS, dir], opts, Buffer.from(payload, 'ascii'));
  let doc: { dir?: unknown; error?: unknown } = {};
  try {
    doc = JSON.parse(r.out.trim().split('\n').pop() ?? '') as typeof doc;
  } catch {
    // the error below says what came back
  }
  if (r.code === 0 && typeof doc.dir === 'string') return doc.dir;
  const why = typeof doc.error === 'string' ? doc.error : lastLine(r);
  throw new MindcvInstallError((t) => t('copying the wheels to {0} failed: {1}', def.label, why));
}

/** A Python on this machine with pip, of those offered. */
async function localPip(opts: InstallMindcvOptions): Promise<string | undefined> {
  for (const p of opts.localPythons) {
    if ((await run('here', [p, '-m', 'pip', '--version'], opts)).code === 0) return p;
  }
  return undefined;
}

/** PyYAML's wheel for the target, downloaded here into a temp folder; undefined when that did not work. */
async function downloadPyyaml(t: TargetPython, opts: InstallMindcvOptions): Promise<string | undefined> {
  const py = await localPip(opts);
  if (!py) return undefined;
  const dest = mkdtempSync(path.join(tmpdir(), 'aft-pyyaml-'));
  try {
    const r = await run('here', pipDownloadArgv(py, t, dest), opts);
    const wheel = readdirSync(dest).find((f) => /^pyyaml-.*\.whl$/i.test(f));
    if (r.code === 0 && wheel) return path.join(dest, wheel); // the caller removes the folder
  } catch (e) {
    rmSync(dest, { recursive: true, force: true }); // cancelled
    throw e;
  }
  rmSync(dest, { recursive: true, force: true });
  return undefined;
}

export async function installMindcv(def: TargetDef, opts: InstallMindcvOptions): Promise<InstallMindcvResult> {
  const py = python(def);
  const ssh = def.kind === 'ssh' ? def.label : undefined;
  const remoteDir = opts.remoteDir ?? REMOTE_WHEELS_DIR;
  const known: { python?: TargetPython } = {}; // the manual commands name its tags once the probe answered
  const fail = (words: (t: Translate) => string): never => {
    throw new MindcvInstallError(
      words,
      manualCommands(py, known.python, { ssh, wheelsDir: opts.wheelsDir, remoteDir }, opts.t),
    );
  };

  opts.onStep?.('verify');
  const carried = await verifyCarriedWheels(opts.wheelsDir); // before anything reaches the target

  opts.onStep?.('probe');
  const p = await run(def, [py, '-c', PROBE], opts);
  if (p.code !== 0) fail((t) => t('the Python at {0} on {1} did not run ({2})', py, def.label, lastLine(p)));
  const probed = (known.python = parseProbe(p.out));
  if (probed.pip === null)
    fail((t) => t('the Python at {0} on {1} has no pip (python -m ensurepip adds it)', py, def.label));

  let pyyaml: InstallMindcvResult['pyyaml'] = 'present';
  let yamlWheel: string | undefined;
  if (probed.pyyaml === null) {
    opts.onStep?.('pyyaml-online');
    if ((await run(def, pipOnlineArgv(py), opts)).code === 0) pyyaml = 'online';
    else {
      opts.onStep?.('pyyaml-download');
      yamlWheel = await downloadPyyaml(probed, opts);
      if (!yamlWheel)
        fail((t) =>
          t(
            'PyYAML is missing on {0}, its pip could not fetch {1}, and no Python here could download its wheel for {2}',
            def.label,
            PYYAML_REQUIREMENT,
            `${probed.abi} ${probed.platforms[0] ?? ''}`.trim(),
          ),
        );
      pyyaml = 'downloaded';
    }
  }

  try {
    opts.onStep?.('copy');
    let findLinks: string[];
    if (ssh) {
      const files = [...carried, ...(yamlWheel ? [yamlWheel] : [])];
      const wheels = files.map((f) => {
        const body = readFileSync(f);
        return { name: path.basename(f), sha256: createHash('sha256').update(body).digest('hex'), body };
      });
      findLinks = [await putWheels(def, wheels, remoteDir, opts)];
    } else {
      findLinks = [opts.wheelsDir, ...(yamlWheel ? [path.dirname(yamlWheel)] : [])];
    }

    opts.onStep?.('install');
    const reqs = [...MINDCV_REQUIREMENTS, ...(yamlWheel ? [wheelRequirement(yamlWheel)] : [])];
    const r = await run(def, pipInstallArgv(py, findLinks, reqs), opts);
    if (r.code !== 0) fail((t) => t('pip on {0} could not install {1}: {2}', def.label, reqs.join(' '), lastLine(r)));
    return { python: probed, pyyaml, findLinks };
  } finally {
    if (yamlWheel) rmSync(path.dirname(yamlWheel), { recursive: true, force: true });
  }
}
