// The browser dashboard's tabs: one WebSocket and one DashboardSession each, on the runs' shared
// stores (runRegistry.ts). What one tab may cost is bounded:
// - at most MAX_TABS sockets; the next is closed at once with 1013 and a reason the page shows;
// - a socket that is not reading: once more than MAX_QUEUED_BYTES wait in its send buffer, nothing
//   more is queued (its session is paused, like a hidden VS Code panel) and one fresh snapshot is
//   sent when it has drained; stalled for STALL_MS, it is closed;
// - a `ready` while a snapshot is still on its way is held (the latest one only) until it is out,
//   so a flood of them builds one or two snapshots, not one each;
// - messages before the history is loaded wait in a queue of at most MAX_PENDING.
import type { WebSocket } from 'ws';
import type { HostMessage, RunKey } from '../../shared/dashboardProtocol';
import { describeRun, targetOf, type RunRegistry } from './runRegistry';
import { DashboardSession } from './session';
import { english, type Translate } from '../l10n';

export const MAX_TABS = 64;
export const MAX_QUEUED_BYTES = 4 << 20;
const DRAINED_BYTES = 256 << 10;
const DRAIN_CHECK_MS = 50;
const STALL_MS = 60_000;
const MAX_PENDING = 64;

export interface TabLimits {
  maxTabs: number;
  maxQueuedBytesPerTab: number;
}

/** Which runs a tab shows: `?run=KEY`, `?compare=K1,K2`, or the newest run. */
function pickRuns(registry: RunRegistry, url: URL): { mode: 'single' | 'compare'; keys: RunKey[] } {
  const compare = (url.searchParams.get('compare') ?? '').split(',').filter((k) => registry.has(k));
  if (compare.length > 0) return { mode: 'compare', keys: [...new Set(compare)].slice(0, 8) };
  const run = url.searchParams.get('run');
  if (run !== null && registry.has(run)) return { mode: 'single', keys: [run] };
  const newest = registry.runs()[0];
  return { mode: 'single', keys: newest ? [newest.key] : [] };
}

export class Tabs {
  private readonly sockets = new Set<WebSocket>();

  constructor(
    private readonly registry: RunRegistry,
    readonly limits: TabLimits = { maxTabs: MAX_TABS, maxQueuedBytesPerTab: MAX_QUEUED_BYTES },
  ) {}

  get count(): number {
    return this.sockets.size;
  }

  /** Bytes waiting in the tabs' send buffers. */
  queuedBytes(): number {
    let n = 0;
    for (const ws of this.sockets) n += ws.bufferedAmount;
    return n;
  }

  closeAll(): void {
    for (const ws of this.sockets) ws.terminate();
  }

  /** `t`: the tab's language (the page's), for the sentences the host writes. */
  connect(ws: WebSocket, url: URL, t: Translate = english, language?: string): void {
    if (this.sockets.size >= this.limits.maxTabs) {
      // a close reason is at most 123 bytes: the Chinese one is well within
      ws.close(1013, t('too many dashboard tabs ({0}) are open: close some, then reload', this.limits.maxTabs));
      return;
    }
    this.sockets.add(ws);
    const { mode, keys } = pickRuns(this.registry, url);
    const maxQueued = this.limits.maxQueuedBytesPerTab;

    // Back-pressure: past the bound, the session is paused (it keeps what changed, posts nothing)
    // until the socket drains; then one snapshot replaces everything it missed.
    let paused = false;
    let pausedAt = 0;
    let drainTimer: NodeJS.Timeout | undefined;
    let snapshotsInFlight = 0;
    let heldReady: unknown;
    const send = (m: HostMessage) => {
      if (ws.readyState !== ws.OPEN) return;
      if (ws.bufferedAmount > maxQueued) return pause();
      if (m.type !== 'snapshot') return ws.send(JSON.stringify(m));
      snapshotsInFlight++;
      ws.send(JSON.stringify(m), () => {
        snapshotsInFlight--;
        if (snapshotsInFlight === 0 && heldReady !== undefined && !closed) {
          const r = heldReady;
          heldReady = undefined;
          receive(r);
        }
      });
    };
    const pause = () => {
      if (paused) return;
      paused = true;
      pausedAt = Date.now();
      session.setVisible(false);
      drainTimer = setInterval(() => {
        if (ws.bufferedAmount <= DRAINED_BYTES) {
          clearInterval(drainTimer);
          drainTimer = undefined;
          paused = false;
          session.setVisible(true);
        } else if (Date.now() - pausedAt > STALL_MS) {
          ws.terminate();
        }
      }, DRAIN_CHECK_MS);
    };

    const session = new DashboardSession({ mode, post: send, appendIntervalMs: 100, t, language });
    const receive = (value: unknown) => {
      const isReady = typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'ready';
      if (isReady && (snapshotsInFlight > 0 || paused)) heldReady = value;
      else session.receive(value);
    };
    const unsubscribe: (() => void)[] = [];
    let closed = false;
    ws.on('close', () => {
      closed = true;
      this.sockets.delete(ws);
      if (drainTimer) clearInterval(drainTimer);
      for (const u of unsubscribe) u();
      session.dispose();
    });
    ws.on('error', () => ws.terminate());
    // UI messages wait until every run has its history in the session.
    const pending: unknown[] = [];
    let started = false;
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      let value: unknown;
      try {
        value = JSON.parse(data.toString());
      } catch {
        return; // not JSON: ignored like any other invalid message
      }
      if (started) receive(value);
      else if (pending.length < MAX_PENDING) pending.push(value);
    });
    if (keys.length === 0)
      send({ type: 'status', key: null, level: 'info', message: t('No runs in this folder yet.') });
    void (async () => {
      for (const key of keys) {
        const feed = this.registry.get(key)!;
        const store = await feed.load();
        if (closed) return;
        const info = describeRun(feed, t);
        store.meta = { name: info.name, target: targetOf(feed.dir, t), notes: info.notes, tags: info.tags };
        session.addRun(key, store.meta, store);
        if (info.problem) session.status(key, 'warning', t('{0}: {1}', info.name, info.problem));
        unsubscribe.push(
          feed.subscribe({
            touched: () => session.touched(key),
            problem: () => {
              const p = describeRun(feed, t).problem;
              if (p) session.status(key, 'warning', t('{0}: {1}', info.name, p));
            },
            // an edit of the name, notes or tags while the tab is open shows at once
            meta: () => {
              const now = describeRun(feed, t);
              store.meta = { ...store.meta, name: now.name, notes: now.notes, tags: now.tags };
              session.addRun(key, store.meta, store);
              if (now.problem) session.status(key, 'warning', t('{0}: {1}', now.name, now.problem));
            },
          }),
        );
      }
      started = true;
      for (const v of pending.splice(0)) receive(v);
    })().catch((err: unknown) => {
      if (closed) return;
      session.status(null, 'error', t('Could not read the run: {0}', err instanceof Error ? err.message : String(err)));
      started = true;
      for (const v of pending.splice(0)) receive(v);
    });
  }
}
