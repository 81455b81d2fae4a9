// The runs a browser dashboard serves: found once (a run directory) or re-listed (a runs root),
// each under an opaque key that never changes while the server lives, and each with one RunFeed:
// the run's series store, read from events.jsonl once and followed while any tab listens. Every
// tab on a run shares that store (50 tabs on a 200k-step run cost one read and one copy).
//
// A run whose files are bad (not regular files, too big, wrong JSON, lines that are not events) is
// still listed and served as far as it can be read; what is wrong is its `problem`, shown in the UI.
import { lstatSync, readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';
import type { RunKey } from '../../shared/dashboardProtocol';
import { checkRunEvent, checkRunMeta } from '../../shared/dashboardValidate';
import type { RunEvent } from '../../shared/eventsProtocol';
import {
  CappedLineSplitter,
  exists,
  MAX_EVENT_LINE_BYTES,
  MAX_SPEC_BYTES,
  MAX_STATUS_BYTES,
  readAppended,
  readJsonObject,
  regularFileProblem,
  type Worded,
} from './runFiles';
import { RunSeriesStore } from './seriesStore';
import { english, joined, type Translate } from '../l10n';

export interface DashboardRunInfo {
  key: RunKey;
  runId: string;
  name: string;
  /** The user's notes and tags (meta.json); empty when it has none. */
  notes: string;
  tags: string[];
  state: string | null;
  startedAt: number | null;
  backbone: string | null;
  /** What is wrong with the run's files, or null for a sound run. */
  problem: string | null;
}

const RUN_FILES = ['events.jsonl', 'status.json', 'spec.json'];
/** meta.json: a name, notes (10 KB at most) and tags (runner/ascend_finetune/meta.py). */
const MAX_META_BYTES = 64 << 10;

export function isRunDir(dir: string): boolean {
  return RUN_FILES.some((f) => exists(path.join(dir, f)));
}

/** What a tab listening to a feed is told. */
export interface FeedListener {
  /** New events went into the shared store. */
  touched(): void;
  /** The run's problem report changed (null: it has none). */
  problem(text: string | null): void;
  /** meta.json changed (a rename, notes or tags edited meanwhile): the header is due again. */
  meta?(): void;
}

/** How long a run's store is kept after its last tab left (a reload reopens it without a re-read). */
const KEEP_AFTER_LAST_TAB_MS = 30_000;

/** One run: its files, its shared store while anyone needs it, and what is wrong with them. */
export class RunFeed {
  private readonly listeners = new Set<FeedListener>();
  private store: RunSeriesStore | undefined;
  private splitter = new CappedLineSplitter(MAX_EVENT_LINE_BYTES);
  private offset = 0;
  private timer: NodeJS.Timeout | undefined;
  private releaseTimer: NodeJS.Timeout | undefined;
  private reading: Promise<void> | undefined;
  private eventsProblem: Worded | null = null;
  private skipped = 0;
  private repaired = 0;
  /** The first bad line, worded in the language of whoever asks (tabs differ). */
  private firstBad: Worded | null = null;
  /** meta.json's size and mtime when last looked at ('' when absent). */
  private metaSeen = '';
  /** Times the store was built from the start of events.jsonl, and bytes read from it in all. */
  loads = 0;
  bytesRead = 0;

  constructor(
    readonly key: RunKey,
    readonly dir: string,
    private readonly pollMs: number,
  ) {}

  get tabs(): number {
    return this.listeners.size;
  }

  /** The shared store, with everything written so far. */
  async load(): Promise<RunSeriesStore> {
    if (this.releaseTimer) clearTimeout(this.releaseTimer);
    this.releaseTimer = undefined;
    if (!this.store) {
      this.store = new RunSeriesStore(this.key, { name: '', target: '' });
      this.offset = 0;
      this.splitter = new CappedLineSplitter(MAX_EVENT_LINE_BYTES);
      this.skipped = this.repaired = 0;
      this.firstBad = this.eventsProblem = null;
      this.loads++;
      // The config panel shows spec.json (the resolved spec) when it reads as an object.
      const spec = readJsonObject(path.join(this.dir, 'spec.json'), MAX_SPEC_BYTES);
      if (spec.ok === true) this.store.setSpecFile(spec.value);
      this.metaSeen = this.metaSignature();
    }
    await this.poll();
    return this.store;
  }

  /** Reads what was appended since the last read into the store; overlapping calls share one read. */
  poll(): Promise<void> {
    this.reading ??= this.readMore().finally(() => (this.reading = undefined));
    return this.reading;
  }

  private async readMore(): Promise<void> {
    const store = this.store;
    if (!store) return;
    const before = this.problemText();
    let fresh = 0;
    const res = await readAppended(path.join(this.dir, 'events.jsonl'), this.offset, (bytes) => {
      this.bytesRead += bytes.length;
      const batch: RunEvent[] = [];
      this.splitter.feed(
        bytes,
        (line, n) => {
          const text = line.trim();
          if (text === '') return;
          let value: unknown;
          try {
            value = JSON.parse(text);
          } catch {
            return this.bad(n, (t) => t('not JSON'));
          }
          const c = checkRunEvent(value);
          // the validator's field-level detail is English, like the protocol it checks
          if (!c.ok) return this.bad(n, () => c.error);
          if (c.repaired) {
            this.repaired++;
            const field = c.repaired;
            this.firstBad ??= (t) => t('line {0}: {1} has the wrong type', n, field);
          }
          batch.push(c.event);
        },
        (n) => this.bad(n, (t) => t('longer than {0} bytes', MAX_EVENT_LINE_BYTES)),
      );
      if (batch.length > 0 && this.store === store) fresh += store.ingest(batch);
    });
    if (this.store !== store) return; // released meanwhile
    this.offset = res.offset;
    this.eventsProblem = res.problem?.worded ?? null;
    if (fresh > 0) for (const l of this.listeners) l.touched();
    const after = this.problemText();
    if (after !== before) for (const l of this.listeners) l.problem(after);
    const meta = this.metaSignature();
    if (meta !== this.metaSeen) {
      this.metaSeen = meta;
      for (const l of this.listeners) l.meta?.();
    }
  }

  /** meta.json's size and mtime, without following a link (the runner replaces it atomically). */
  private metaSignature(): string {
    try {
      const st = lstatSync(path.join(this.dir, 'meta.json'));
      return `${st.size}:${st.mtimeMs}:${st.ino}`;
    } catch {
      return '';
    }
  }

  private bad(lineNo: number, why: Worded): void {
    this.skipped++;
    this.firstBad ??= (t) => t('line {0}: {1}', lineNo, why(t));
  }

  /** What is wrong with events.jsonl as far as it was read, or null; `t`: the asking tab's language. */
  problemText(t: Translate = english): string | null {
    if (this.eventsProblem) return this.eventsProblem(t);
    if (!this.skipped && !this.repaired) return null;
    const parts = [];
    if (this.skipped) parts.push(t('{0} line(s) skipped', this.skipped));
    if (this.repaired) parts.push(t('{0} event(s) with wrong-typed fields', this.repaired));
    return t('events.jsonl: {0} (first: {1})', joined(parts, t), this.firstBad?.(t) ?? '?');
  }

  /** Calls `listener` on every change; polls while anyone listens. */
  subscribe(listener: FeedListener): () => void {
    this.listeners.add(listener);
    this.timer ??= setInterval(() => void this.poll().catch(() => {}), this.pollMs);
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size > 0) return;
      if (this.timer) clearInterval(this.timer);
      this.timer = undefined;
      this.releaseTimer = setTimeout(() => this.release(), KEEP_AFTER_LAST_TAB_MS);
      this.releaseTimer.unref();
    };
  }

  private release(): void {
    if (this.listeners.size > 0) return;
    this.store = undefined;
    this.releaseTimer = undefined;
  }

  stop(): void {
    this.listeners.clear();
    if (this.timer) clearInterval(this.timer);
    if (this.releaseTimer) clearTimeout(this.releaseTimer);
    this.timer = this.releaseTimer = undefined;
    this.store = undefined;
  }
}

/** What the UI may know about a run: names, state and its problem (in `t`'s language), never its path. */
export function describeRun(feed: RunFeed, t: Translate = english): DashboardRunInfo {
  const dir = feed.dir;
  const problems: string[] = [];
  const status = readJsonObject(path.join(dir, 'status.json'), MAX_STATUS_BYTES);
  const spec = readJsonObject(path.join(dir, 'spec.json'), MAX_SPEC_BYTES);
  const st = status.ok === true ? status.value : null;
  const sp = spec.ok === true ? spec.value : null;
  if (status.ok === false) problems.push(status.worded(t));
  if (spec.ok === false) problems.push(spec.worded(t));
  if (st && 'state' in st && typeof st.state !== 'string') problems.push(t('status.json: state is not a string'));
  if (sp && 'name' in sp && typeof sp.name !== 'string') problems.push(t('spec.json: name is not a string'));
  const model = sp?.model;
  if (sp && 'model' in sp && (typeof model !== 'object' || model === null || Array.isArray(model)))
    problems.push(t('spec.json: model is not an object'));
  const backbone = (model as Record<string, unknown> | undefined)?.backbone;
  const events = regularFileProblem(path.join(dir, 'events.jsonl'), t);
  if (events) problems.push(events);
  const fromEvents = feed.problemText(t);
  if (fromEvents && !problems.includes(fromEvents)) problems.push(fromEvents);
  // meta.json: the name the user gave the run after the fact (Rename Run) comes first; its notes
  // and tags go to the header. A missing file is no problem; a bad field is named and left out.
  const metaFile = readJsonObject(path.join(dir, 'meta.json'), MAX_META_BYTES);
  const meta = checkRunMeta(metaFile.ok === true ? metaFile.value : {});
  if (metaFile.ok === false && exists(path.join(dir, 'meta.json'))) problems.push(metaFile.worded(t));
  if (meta.problem) problems.push(meta.problem);
  return {
    key: feed.key,
    runId: path.basename(dir),
    name: meta.name || (typeof sp?.name === 'string' ? sp.name : path.basename(dir)),
    notes: meta.notes,
    tags: meta.tags,
    state: typeof st?.state === 'string' ? st.state : null,
    startedAt: typeof st?.started_at === 'number' ? st.started_at : null,
    backbone: typeof backbone === 'string' ? backbone : null,
    problem: problems.length ? problems.join(t('; ')) : null,
  };
}

/** Where a run's files are, as the header says it (`t`: the tab's language). */
export function targetOf(dir: string, t: Translate = english): string {
  const status = readJsonObject(path.join(dir, 'status.json'), MAX_STATUS_BYTES);
  const host = status.ok === true ? status.value.host : undefined;
  return typeof host === 'string' && host ? t('{0} (local files)', host) : t('local files');
}

/** The runs of a run directory (one) or a runs root (its sub-folders, re-listed on `rescan`). */
export class RunRegistry {
  private readonly feeds = new Map<RunKey, RunFeed>();
  private readonly keyOfDir = new Map<string, RunKey>();

  constructor(
    readonly target: string,
    readonly kind: 'run' | 'root',
    private readonly pollMs: number,
  ) {
    this.rescan();
  }

  get(key: RunKey): RunFeed | undefined {
    return this.feeds.get(key);
  }

  has(key: RunKey): boolean {
    return this.feeds.has(key);
  }

  all(): RunFeed[] {
    return [...this.feeds.values()];
  }

  /** Runs get keys in the order they are found; a key never changes while the server lives. */
  private add(dir: string): void {
    if (this.keyOfDir.has(dir)) return;
    const key = `r${this.keyOfDir.size + 1}`;
    this.keyOfDir.set(dir, key);
    this.feeds.set(key, new RunFeed(key, dir, this.pollMs));
  }

  rescan(): void {
    if (this.kind === 'run') return this.add(this.target);
    let names: string[];
    try {
      names = readdirSync(this.target).sort();
    } catch {
      return;
    }
    for (const name of names) {
      const dir = path.join(this.target, name);
      try {
        if (statSync(dir).isDirectory() && isRunDir(dir)) this.add(dir);
      } catch {
        // removed meanwhile
      }
    }
  }

  /** Every run, newest first; `t`: the language of their problems. */
  runs(t: Translate = english): DashboardRunInfo[] {
    return this.all()
      .map((f) => describeRun(f, t))
      .sort((a, b) => (b.startedAt ?? 0) - (a.startedAt ?? 0) || b.runId.localeCompare(a.runId));
  }

  stop(): void {
    for (const f of this.feeds.values()) f.stop();
  }
}
