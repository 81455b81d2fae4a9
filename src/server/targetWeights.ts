// Which catalog weights the spec's target has in its weights cache, for completing model.pretrained.
// The server cannot reach the target: it asks the extension (WEIGHTS_STATUS_REQUEST), which runs the
// runner's `weights-status` there. One answer per target is kept for a while (a minute), failures
// too, so completing never costs an SSH call per keystroke and an unreachable target is not asked
// again and again; the first completion waits briefly for the first answer.
import {
  asWeightsStatusResult,
  type SpecTargetInfo,
  type TargetWeightsEntry,
  type WeightsStatusParams,
  type WeightsStatusResult,
} from '../shared/specProtocol';

/** What completion knows about the target's cache. */
export interface WeightsView {
  target: SpecTargetInfo;
  /** The target's answer, by source (an SSH target that answered). */
  entries?: ReadonlyMap<string, TargetWeightsEntry>;
  /** Why the target's cache is not known: not a configured target, no answer yet, or it failed. */
  unknown?: { why: 'unconfigured' | 'pending' | 'failed'; message?: string };
}

interface TargetState {
  result?: WeightsStatusResult;
  at: number;
  inFlight?: Promise<void>;
}

export interface TargetWeightsOptions {
  /** How long an answer (or a failure) is used before the target is asked again. */
  ttlMs?: number;
  now?: () => number;
}

export class TargetWeightsStore {
  private readonly targets = new Map<string, TargetState>();

  constructor(
    /** Sends WEIGHTS_STATUS_REQUEST to the client. */
    private readonly ask_: (params: WeightsStatusParams) => Promise<unknown>,
    private readonly opts: TargetWeightsOptions = {},
  ) {}

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  /** What is known now; never asks. A local target's cache is this machine's, read directly. */
  view(target: SpecTargetInfo): WeightsView {
    if (target.kind === 'local') return { target };
    if (target.kind === 'unknown') return { target, unknown: { why: 'unconfigured' } };
    const r = this.targets.get(target.id)?.result;
    if (!r) return { target, unknown: { why: 'pending' } };
    if (!r.ok) return { target, unknown: { why: 'failed', message: r.message } };
    return { target, entries: new Map(r.sources.map((s) => [s.source, s])) };
  }

  /** Whether completing should ask the target: an SSH target with no answer, or an old one, and none on its way. */
  needsAsking(target: SpecTargetInfo): boolean {
    if (target.kind !== 'ssh') return false;
    const s = this.targets.get(target.id);
    if (!s) return true;
    return !s.inFlight && (!s.result || this.now() - s.at >= (this.opts.ttlMs ?? 60_000));
  }

  /** Asks the target (one question at a time); resolves when its answer is in. Never rejects. */
  ask(target: SpecTargetInfo): Promise<void> {
    let s = this.targets.get(target.id);
    if (!s) this.targets.set(target.id, (s = { at: 0 }));
    if (s.inFlight) return s.inFlight;
    const state = s;
    state.inFlight = this.ask_({ targetId: target.id })
      .then(asWeightsStatusResult, (e: unknown) => ({
        ok: false as const,
        message: e instanceof Error ? e.message : String(e),
      }))
      .then((result) => {
        state.result = result;
        state.at = this.now();
        state.inFlight = undefined;
      });
    return state.inFlight;
  }

  /** Weights reached this target's cache: the next completion asks it again. */
  forget(targetId: string): void {
    this.targets.delete(targetId);
  }

  /** Targets changed (settings, ~/.ssh/config): what was known may be about another machine. */
  clear(): void {
    this.targets.clear();
  }
}
