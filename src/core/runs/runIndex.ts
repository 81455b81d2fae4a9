// The Runs view's memory: every run launched from here or found on a target, persisted (through a
// Memento-like store) so the history and each stream's position survive a window reload.
import { runHealth, type RunHealth, type RunState } from '../../shared/eventsProtocol';

/** The user's metadata of a run (`meta.json`, set by the runner's `meta` command). */
export interface RunMeta {
  name: string | null;
  notes: string;
  tags: string[];
}

export interface RunRecord {
  /** 'local' for this machine, else the SSH target's id. */
  targetId: string;
  runId: string;
  /** The run directory, as a path on the target. */
  runDir: string;
  name?: string;
  backbone?: string;
  state: RunState;
  /** unix seconds */
  startedAt: number;
  endedAt?: number | null;
  /** The last event seq received: a re-attach after a reload continues after it. */
  lastSeq: number;
  /** Last known description (epoch, loss, best accuracy), shown until a stream refreshes it. */
  description?: string;
  /** The checkpoint (file name) a resumed run started from. */
  resumedFrom?: string;
  /** A multi-node run's other nodes (node 1, 2, ...): their targets and run directories there. */
  nodes?: { targetId: string; runDir: string }[];
  /** The health verdict once it ended (from `ls` or the stream's run_finished). */
  health?: RunHealth;
  /** What is wrong with the run's files (`ls`'s `problem`): a bad run, shown as such. */
  problem?: string;
  /** The user's name, notes and tags (`ls`'s `meta`, or the `meta` command's answer). */
  meta?: RunMeta;
}

/** One run as the runner's `ls ROOT` lists it (runs[] of its JSON output). */
export interface ListedRun {
  run_id: string;
  run_dir: string;
  state: RunState;
  started_at?: number | null;
  ended_at?: number | null;
  name?: string | null;
  backbone?: string | null;
  /** Set (1, 2, ...) on another node's part of a multi-node run: its master's run is the run. */
  node_rank?: number | null;
  /** What is wrong with the run's files, or null. */
  problem?: string | null;
  /** The health verdict (read it with `runHealth`). */
  health?: unknown;
  meta?: { name?: unknown; notes?: unknown; tags?: unknown } | null;
  display_name?: string | null;
  /** summary.json's figures (runner/ascend_finetune/train/summary.py); null for runs older than it. Read with `listedSummary`. */
  summary?: Record<string, unknown> | null;
  /** The spec flattened to dotted keys (`train.lr`), as src/core/runs/specDiff.ts flattens it. */
  spec_fields?: Record<string, unknown> | null;
}

/** `meta` as the runner prints it, checked: wrong-typed parts read as unset. */
export function runMeta(x: unknown): RunMeta | undefined {
  if (!obj(x)) return undefined;
  return {
    name: typeof x.name === 'string' && x.name !== '' ? x.name : null,
    notes: typeof x.notes === 'string' ? x.notes : '',
    tags: Array.isArray(x.tags) ? x.tags.filter((t): t is string => typeof t === 'string') : [],
  };
}

/** The part of vscode.Memento this needs, so tests can pass a Map. */
export interface KeyValueStore {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): PromiseLike<void>;
}

const KEY = 'ascend.runIndex.v1';
const key = (targetId: string, runId: string) => `${targetId}\u0000${runId}`;

export class RunIndex {
  private readonly records = new Map<string, RunRecord>();

  constructor(private readonly store: KeyValueStore) {
    for (const r of store.get<RunRecord[]>(KEY) ?? []) {
      if (r && typeof r.runId === 'string' && typeof r.targetId === 'string')
        this.records.set(key(r.targetId, r.runId), r);
    }
  }

  /** Newest first. */
  all(): RunRecord[] {
    return [...this.records.values()].sort((a, b) => b.startedAt - a.startedAt || a.runId.localeCompare(b.runId));
  }

  /** Runs per target, each list newest first. */
  byTarget(): Map<string, RunRecord[]> {
    const out = new Map<string, RunRecord[]>();
    for (const r of this.all()) out.set(r.targetId, [...(out.get(r.targetId) ?? []), r]);
    return out;
  }

  get(targetId: string, runId: string): RunRecord | undefined {
    return this.records.get(key(targetId, runId));
  }

  /** Runs to re-attach to on activation. */
  live(): RunRecord[] {
    return this.all().filter((r) => r.state === 'running');
  }

  upsert(record: RunRecord): Promise<void> {
    const old = this.get(record.targetId, record.runId);
    // a stream never goes backwards: keep the higher seq whichever side reports it
    this.records.set(key(record.targetId, record.runId), {
      ...old,
      ...record,
      lastSeq: Math.max(old?.lastSeq ?? 0, record.lastSeq),
    });
    return this.save();
  }

  /** Only the stream position and description, the frequent update while a run streams. */
  progress(targetId: string, runId: string, lastSeq: number, description?: string, state?: RunState): Promise<void> {
    const r = this.get(targetId, runId);
    if (!r) return Promise.resolve();
    return this.upsert({ ...r, lastSeq, description: description ?? r.description, state: state ?? r.state });
  }

  /**
   * Takes a target's `ls` as the truth for that target: new runs are added, known ones take the
   * listed state, and runs the target no longer has (deleted there) leave the index. Stream
   * positions are kept.
   */
  mergeListing(targetId: string, listed: readonly ListedRun[]): Promise<void> {
    const seen = new Set<string>();
    // Checked again here (runRunner already checks `ls` output): the index outlives any one caller.
    for (const l of parseListing({ runs: listed }).runs) {
      if (typeof l.node_rank === 'number' && l.node_rank > 0) continue; // listed under its master's target
      seen.add(l.run_id);
      const old = this.get(targetId, l.run_id);
      this.records.set(key(targetId, l.run_id), {
        ...old, // what only the extension knows (a multi-node run's nodes, what it resumed from)
        targetId,
        runId: l.run_id,
        runDir: l.run_dir,
        name: l.name ?? old?.name,
        backbone: l.backbone ?? old?.backbone,
        state: l.state,
        startedAt: l.started_at ?? old?.startedAt ?? 0,
        endedAt: l.ended_at ?? old?.endedAt ?? null,
        lastSeq: old?.lastSeq ?? 0,
        description: old?.description,
        health: runHealth(l.health) ?? old?.health,
        problem: typeof l.problem === 'string' && l.problem !== '' ? l.problem : undefined,
        meta: runMeta(l.meta) ?? old?.meta,
      });
    }
    for (const r of [...this.records.values()]) {
      if (r.targetId === targetId && !seen.has(r.runId)) this.records.delete(key(r.targetId, r.runId));
    }
    return this.save();
  }

  /** What a `meta` command answered for a run, or the verdict its stream brought. */
  annotate(
    targetId: string,
    runId: string,
    fields: Pick<RunRecord, 'meta'> | Pick<RunRecord, 'health'>,
  ): Promise<void> {
    const r = this.get(targetId, runId);
    if (!r) return Promise.resolve();
    this.records.set(key(targetId, runId), { ...r, ...fields });
    return this.save();
  }

  remove(targetId: string, runId: string): Promise<void> {
    this.records.delete(key(targetId, runId));
    return this.save();
  }

  private save(): Promise<void> {
    return Promise.resolve(this.store.update(KEY, this.all()));
  }
}

const STATES: ReadonlySet<string> = new Set<RunState>(['running', 'completed', 'stopped', 'failed', 'lost']);
const finite = (x: unknown) => typeof x === 'number' && Number.isFinite(x);
const obj = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** Optional fields of a listed run (status.json's and `ls`'s progress ones) and the type each must have. */
const OPTIONAL: Readonly<Record<string, (x: unknown) => boolean>> = {
  started_at: finite,
  ended_at: finite,
  name: (x) => typeof x === 'string',
  backbone: (x) => typeof x === 'string',
  host: (x) => typeof x === 'string',
  node_rank: (x) => Number.isSafeInteger(x),
  pid: (x) => Number.isSafeInteger(x) && (x as number) > 0,
  pid_start: (x) => Number.isSafeInteger(x),
  exit_code: (x) => Number.isSafeInteger(x),
  epochs: finite,
  epoch: finite,
  step: finite,
  loss: finite,
  problem: (x) => typeof x === 'string',
  health: obj,
  meta: obj,
  display_name: (x) => typeof x === 'string',
  summary: obj,
  spec_fields: obj,
  best: (x) =>
    obj(x) && (x.metrics == null || (obj(x.metrics) && (x.metrics.val_acc == null || finite(x.metrics.val_acc)))),
};

/**
 * The runs of an `ls` output, checked at the boundary: a run without a usable run_id, run_dir
 * or state is skipped; a field of the wrong type (pid "12" or 1e20, started_at "today", best 5)
 * is dropped, so that nothing downstream (the index, the Runs view's descriptions) sees it.
 * Each skip or drop is one warning.
 */
export function parseListing(output: unknown): { runs: ListedRun[]; warnings: string[] } {
  const warnings: string[] = [];
  const raw = obj(output) ? output.runs : undefined;
  if (!Array.isArray(raw)) {
    if (raw !== undefined) warnings.push(`ls: runs is ${JSON.stringify(raw).slice(0, 40)}, not a list`);
    return { runs: [], warnings };
  }
  const runs: ListedRun[] = [];
  raw.forEach((r: unknown, i) => {
    if (!obj(r) || typeof r.run_id !== 'string' || r.run_id === '' || typeof r.run_dir !== 'string') {
      warnings.push(`ls: run ${i} skipped: no run_id and run_dir strings (${JSON.stringify(r)?.slice(0, 80)})`);
      return;
    }
    if (typeof r.state !== 'string' || !STATES.has(r.state)) {
      warnings.push(`ls: run ${r.run_id} skipped: state ${JSON.stringify(r.state)?.slice(0, 40)} is unknown`);
      return;
    }
    const run: Record<string, unknown> = { ...r };
    for (const [field, ok] of Object.entries(OPTIONAL)) {
      const v = run[field];
      if (v === undefined || v === null || ok(v)) continue;
      delete run[field];
      const got = typeof v === 'number' ? String(v) : JSON.stringify(v).slice(0, 40);
      warnings.push(`ls: run ${r.run_id}: ${field} ${got} ignored (wrong type)`);
    }
    runs.push(run as unknown as ListedRun);
  });
  return { runs, warnings };
}
