// A spec's paths as a target sees them: the runner's `probe` (one call for several paths), and a
// cache per (target, path) so that editing a spec for an SSH host costs an ssh call now and then,
// not one per keystroke. No vscode here.
import { isFact, type PathFact } from '../../shared/specProtocol';
import { runRunner, type RunOptions } from '../targets/runnerCli';
import type { Target } from '../targets/target';

/** argv after the launcher. `--` keeps a path that starts with '-' a path, and the answer's `path` the one sent. */
export function probeArgs(paths: readonly string[], maxClasses?: number): string[] {
  return ['probe', ...(maxClasses === undefined ? [] : ['--max-classes', String(maxClasses)]), '--', ...paths];
}

/** Runs `probe` on a target: one fact per path, in order. */
export async function probePaths(
  target: Target,
  paths: readonly string[],
  opts: RunOptions & { maxClasses?: number } = {},
): Promise<PathFact[]> {
  if (paths.length === 0) return [];
  const out = await runRunner<{ paths?: unknown }>(target, probeArgs(paths, opts.maxClasses), opts);
  const list = out && Array.isArray(out.paths) ? out.paths : [];
  if (list.length !== paths.length || !list.every(isFact) || list.some((f, i) => f.path !== paths[i])) {
    throw new Error('the runner answered probe with something else (is it older than this extension?)');
  }
  return list;
}

export interface PathCacheOptions {
  /** How long an answer (and a failure) stands: files on a target change without telling us. */
  ttlMs?: number;
  /** Most answers kept; the least recently used go first. */
  maxEntries?: number;
  now?: () => number;
}

/** Asks a target about paths; `PathCache` calls it only for paths it has no fresh answer for. */
export type ProbeFn = (paths: string[]) => Promise<PathFact[]>;

export class PathCache {
  private readonly entries = new Map<string, { at: number; fact: PathFact }>();
  private readonly inFlight = new Map<string, Promise<PathFact>>();
  /** A target whose last probe failed fails again at once until the TTL ends: no ssh call per edit to a box that is down. */
  private readonly failures = new Map<string, { at: number; error: unknown }>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(opts: PathCacheOptions = {}) {
    this.ttlMs = opts.ttlMs ?? 30_000;
    this.maxEntries = Math.max(1, opts.maxEntries ?? 500);
    this.now = opts.now ?? Date.now;
  }

  /** Facts for `paths` on `targetId`, in order: fresh answers, answers already on their way, and one `probe` call for the rest. */
  get(targetId: string, paths: readonly string[], probe: ProbeFn): Promise<PathFact[]> {
    const now = this.now();
    const failed = this.failures.get(targetId);
    if (failed && now - failed.at < this.ttlMs) return Promise.reject(failed.error);
    this.failures.delete(targetId);
    const answers = new Map<string, Promise<PathFact>>();
    const todo: string[] = [];
    for (const p of new Set(paths)) {
      const key = keyOf(targetId, p);
      const have = this.entries.get(key);
      if (have && now - have.at < this.ttlMs) {
        this.entries.delete(key); // re-inserted: most recently used last
        this.entries.set(key, have);
        answers.set(p, Promise.resolve(have.fact));
      } else if (this.inFlight.has(key)) {
        answers.set(p, this.inFlight.get(key)!);
      } else {
        todo.push(p);
      }
    }
    if (todo.length) {
      const batch = (async () => probe(todo))().then(
        (facts) => {
          if (facts.length !== todo.length) throw new Error(`probe answered ${facts.length} of ${todo.length} paths`);
          const at = this.now();
          todo.forEach((p, i) => this.store(keyOf(targetId, p), { at, fact: facts[i] }));
          return facts;
        },
        (error: unknown) => {
          this.failures.set(targetId, { at: this.now(), error });
          throw error;
        },
      );
      const done = batch.finally(() => todo.forEach((p) => this.inFlight.delete(keyOf(targetId, p))));
      done.catch(() => undefined); // awaited through the per-path promises below
      todo.forEach((p, i) => {
        const one = done.then((facts) => facts[i]);
        this.inFlight.set(keyOf(targetId, p), one);
        answers.set(p, one);
      });
    }
    return Promise.all(paths.map((p) => answers.get(p)!));
  }

  /** Forgets a target's answers (or all): its settings or its runner changed. */
  clear(targetId?: string): void {
    if (targetId === undefined) {
      this.entries.clear();
      this.failures.clear();
      return;
    }
    for (const k of [...this.entries.keys()]) if (k.startsWith(keyOf(targetId, ''))) this.entries.delete(k);
    this.failures.delete(targetId);
  }

  get size(): number {
    return this.entries.size;
  }

  private store(key: string, entry: { at: number; fact: PathFact }): void {
    this.entries.delete(key);
    this.entries.set(key, entry);
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
  }
}

function keyOf(targetId: string, p: string): string {
  return `${targetId}\0${p}`;
}
