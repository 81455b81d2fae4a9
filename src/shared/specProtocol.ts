// The run-spec language server's own messages, beyond LSP's: both sides (src/server/server.ts and
// src/vscode/specLanguage.ts) name them from here. No imports: the server bundle and the extension share it.

/** Client → server notification: the runs the extension knows, for "Open last run". */
export const RUNS_NOTIFICATION = 'ascend/runs';
/** Client → server notification (and `initializationOptions.specTargets`): which target each spec file is for. */
export const SPEC_TARGETS_NOTIFICATION = 'ascend/specTargets';
/** Server → client request: what a spec's paths are on an SSH target (the runner's `probe`). */
export const PROBE_REQUEST = 'ascend/probePaths';

/** A target as the server names it in diagnostics. `unknown`: a target id that is not configured. */
export interface SpecTargetInfo {
  id: string;
  label: string;
  kind: 'local' | 'ssh' | 'unknown';
}

export interface SpecTargets {
  /** The `ascendFinetune.specFiles.target` setting's target (this machine when empty). */
  default: SpecTargetInfo;
  /** Per spec file URI: the target last chosen through "Start on target…". */
  files: Record<string, SpecTargetInfo>;
}

export const LOCAL_SPEC_TARGET: SpecTargetInfo = { id: 'local', label: 'this machine', kind: 'local' };

/** One path as the runner's `probe` describes it (docs/protocol.md, section 4). */
export type PathFact = { path: string; resolved: string } & (
  | { kind: 'missing' | 'other' }
  /** `run`: for `<run>/checkpoints/<file>`, what that run's spec.json trained with. */
  | { kind: 'file'; bytes: number | null; run?: { backbone: string; image_size: number | null } }
  /**
   * `classes`: the first class folder names, sorted; `count`: all of them. `images`: image files in
   * the class folders; `typical_size`: their median shorter side (px, from a few headers), or null.
   */
  | {
      kind: 'folder';
      classes: string[];
      count: number;
      error?: string;
      images?: number;
      typical_size?: number | null;
    }
);

export interface ProbeParams {
  targetId: string;
  /** Paths as the runner will open them on the target (relative ones already made absolute). */
  paths: string[];
}

/** The answer: one fact per path, in order, or why there are none. */
export type ProbeResult = { ok: true; facts: PathFact[] } | { ok: false; message: string };

function isInfo(x: unknown): x is SpecTargetInfo {
  const o = x as SpecTargetInfo;
  return (
    typeof o === 'object' &&
    o !== null &&
    typeof o.id === 'string' &&
    typeof o.label === 'string' &&
    ['local', 'ssh', 'unknown'].includes(o.kind)
  );
}

/** The targets message as received: anything malformed is dropped, not trusted. */
export function asSpecTargets(x: unknown): SpecTargets {
  const o = (typeof x === 'object' && x !== null ? x : {}) as Partial<SpecTargets>;
  const files: Record<string, SpecTargetInfo> = {};
  if (typeof o.files === 'object' && o.files !== null)
    for (const [uri, t] of Object.entries(o.files)) if (isInfo(t)) files[uri] = t;
  return { default: isInfo(o.default) ? o.default : LOCAL_SPEC_TARGET, files };
}

/** A probe answer as received. */
export function asProbeResult(x: unknown, count: number): ProbeResult {
  const o = x as ProbeResult;
  if (typeof o === 'object' && o !== null && o.ok === false && typeof o.message === 'string') return o;
  if (
    typeof o === 'object' &&
    o !== null &&
    o.ok === true &&
    Array.isArray(o.facts) &&
    o.facts.length === count &&
    o.facts.every(isFact)
  )
    return o;
  return { ok: false, message: 'the extension answered the path check with something else' };
}

export function isFact(x: unknown): x is PathFact {
  const f = x as PathFact;
  if (typeof f !== 'object' || f === null || typeof f.path !== 'string' || typeof f.resolved !== 'string') return false;
  if (f.kind === 'folder')
    return Array.isArray(f.classes) && f.classes.every((c) => typeof c === 'string') && typeof f.count === 'number';
  return f.kind === 'file' || f.kind === 'missing' || f.kind === 'other';
}

/**
 * Server → client request: which catalog weights the target's weights cache holds (the runner's
 * `weights-status` there), for completing model.pretrained. The server keeps the answer a while.
 */
export const WEIGHTS_STATUS_REQUEST = 'ascend/weightsStatus';

export interface WeightsStatusParams {
  targetId: string;
}

/** Client → server notification: weights reached this target's cache (a copy, a download): ask it afresh. */
export const WEIGHTS_CHANGED_NOTIFICATION = 'ascend/weightsChanged';

/** One source as the target's `weights-status` lists it (docs/protocol.md, section 4). */
export interface TargetWeightsEntry {
  source: string;
  path: string;
  state: 'cached' | 'missing' | 'damaged' | 'unsafe' | 'unreadable';
  /** The cached file's size (cached or damaged). */
  bytes: number | null;
  /** A `.part` a download there would resume. */
  partBytes: number;
  why?: string;
}

export type WeightsStatusResult = { ok: true; sources: TargetWeightsEntry[] } | { ok: false; message: string };

const WEIGHT_STATES = ['cached', 'missing', 'damaged', 'unsafe', 'unreadable'];

/** A weights-status answer as received: a malformed entry makes it an answer without facts. */
export function asWeightsStatusResult(x: unknown): WeightsStatusResult {
  const o = x as WeightsStatusResult;
  if (typeof o === 'object' && o !== null && o.ok === false && typeof o.message === 'string') return o;
  if (
    typeof o === 'object' &&
    o !== null &&
    o.ok === true &&
    Array.isArray(o.sources) &&
    o.sources.every(
      (s) =>
        typeof s === 'object' &&
        s !== null &&
        typeof s.source === 'string' &&
        typeof s.path === 'string' &&
        WEIGHT_STATES.includes(s.state) &&
        (s.bytes === null || typeof s.bytes === 'number') &&
        typeof s.partBytes === 'number',
    )
  )
    return o;
  return { ok: false, message: 'the extension answered the weights listing with something else' };
}
