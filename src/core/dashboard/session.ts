// One open dashboard (a VS Code panel, or one browser tab of the `dashboard` server): the runs it
// shows, their series, and the conversation with its UI. Transport-free: the owner feeds it events
// and UI messages and gives it a `post` function; it never touches VS Code, sockets or files.
//
// CONTRACT (the panel and the browser server are written against this API):
//   const s = new DashboardSession({ mode: 'single', post: (m) => webview.postMessage(m) });
//   s.addRun('r1', { name: 'run-20261202-1', target: 'This machine' });
//   s.ingest('r1', events);     // RunEvents in seq order, any batch size; duplicates are ignored
//   s.receive(rawFromUi);       // validated here; a `ready` or `zoom` is answered with a snapshot
//   s.setVisible(false/true);   // nothing is posted while hidden; a snapshot is sent on show
//   s.dispose();
// Additions since the first contract (all optional): `onExport`, `onInvalid`, `window`,
// `restoreToken`, `uiReloadsWhenShown` in the options; `signal()` (a dropped or lost stream),
// `status()` (a banner), `revision`, `store()`, and a shared `store` argument to `addRun` with
// `touched()` (one copy of a run's series for many browser tabs).
//
// Posting rules: nothing before the UI's first `ready` (it is not listening yet) and nothing while
// hidden (VS Code drops messages to a hidden webview). New events are batched into one `append`
// per run every `appendIntervalMs`; a snapshot replaces appends when the UI needs everything again
// (ready, shown, zoom, a width change that changes the downsampling, a resume that rewrote steps,
// or live rows piling up past a downsampled snapshot).
import type { RunEvent } from '../../shared/eventsProtocol';
import type {
  DashboardHeader,
  HostMessage,
  RunData,
  RunKey,
  UiMessage,
  ViewRange,
} from '../../shared/dashboardProtocol';
import { english, type Translate } from '../l10n';
import type { TransportSignal } from '../runs/state';
import { AMP_WINDOW, ampHealth } from './ampHealth';
import { ampScaling } from './ampScaling';
import { ROWS_PER_PIXEL, selectRows } from './downsample';
import { configDiff, differingSettings } from './runConfig';
import { RunSeriesStore, STEP_SERIES } from './seriesStore';
import { validateUiMessage } from '../../shared/dashboardValidate';

export interface RunMeta {
  name: string;
  target: string;
  /** The user's notes and tags (meta.json); a rename or an edit re-sends them with `addRun`. */
  notes?: string;
  tags?: string[];
}

export interface SessionOptions {
  mode: 'single' | 'compare';
  post: (message: HostMessage) => void;
  /** Appends are batched and posted at most this often (ms); 0 posts at once. */
  appendIntervalMs?: number;
  /** A valid `export` message (the VS Code host saves it; without it the UI is told it cannot). */
  onExport?: (message: Extract<UiMessage, { type: 'export' }>) => void;
  /** A message that failed validation, with the reason (for the owner's log). */
  onInvalid?: (error: string) => void;
  /** Steps the AMP card's "recent" counts cover. */
  window?: number;
  /** Sent in every snapshot as `restore` (the VS Code panel's key for restoring after a reload). */
  restoreToken?: string;
  /** The UI is destroyed when hidden and reloads when shown (a VS Code webview without
   * retainContextWhenHidden): on show, wait for its new `ready` instead of posting into a page
   * that is still loading. */
  uiReloadsWhenShown?: boolean;
  /** Words the sentences the host writes (the AMP card, the header's AMP text, banners) in the
   * UI's language: vscode.l10n.t in VS Code, the bundle of the tab's language in the browser. */
  t?: Translate;
  /** The UI's language tag, for the numbers in those sentences (the runner's reworded verdict). */
  language?: string;
}

const DEFAULT_WIDTH = 1000;
const DEFAULT_INTERVAL_MS = 100;
/** Rows appended since the last snapshot, per pixel, before a fresh (downsampled) snapshot replaces
 * them: keeps the UI's arrays bounded on a long live run and turns a big backfill into snapshots. */
const RESNAPSHOT_ROWS_PER_PIXEL = 4;
/** Zoom and resize snapshots are at least this far apart (a flood of zooms costs one per gap). */
const ZOOM_GAP_MS = 50;

interface Entry {
  store: RunSeriesStore;
  /** How much of each block the UI holds (rows, evals, device samples, notices). */
  sentRows: number;
  sentEvals: number;
  sentDevices: number;
  sentHost: number;
  sentConfig: number;
  sentNotices: number;
  sentMarks: number;
  sentRewinds: number;
  /** Rows appended since the last snapshot. */
  appendedSinceSnapshot: number;
  dirty: boolean;
}

export class DashboardSession {
  private readonly runs = new Map<RunKey, Entry>();
  private width = DEFAULT_WIDTH;
  private range: ViewRange = { min: null, max: null };
  private visible = true;
  private ready = false;
  private disposed = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private zoomTimer: ReturnType<typeof setTimeout> | undefined;
  private lastZoomSnapshotAt = -Infinity;
  private readonly banners = new Map<RunKey | null, Extract<HostMessage, { type: 'status' }>>();
  /** Bumped by every snapshot and append posted. */
  revision = 0;

  private readonly t: Translate;

  constructor(readonly options: SessionOptions) {
    this.t = options.t ?? english;
  }

  /**
   * `store`: a run's series shared by several sessions (one browser tab each): the owner ingests
   * each event once into the store and calls `touched(key)` on every session, instead of `ingest`.
   */
  addRun(key: RunKey, meta: RunMeta, store?: RunSeriesStore): void {
    const existing = this.runs.get(key);
    if (existing) {
      existing.store.meta = { ...meta };
      this.markDirty(existing);
      return;
    }
    if (this.options.mode === 'single' && this.runs.size > 0)
      throw new Error(
        `a single-run dashboard already shows run ${[...this.runs.keys()][0]}; open a compare dashboard for several runs`,
      );
    this.runs.set(key, {
      store: store ?? new RunSeriesStore(key, { ...meta }),
      sentRows: 0,
      sentEvals: 0,
      sentDevices: 0,
      sentHost: 0,
      sentConfig: 0,
      sentNotices: 0,
      sentMarks: 0,
      sentRewinds: 0,
      appendedSinceSnapshot: 0,
      dirty: false,
    });
    // a run added to an open compare dashboard: the UI needs its whole block
    if (this.canPost()) this.snapshot();
  }

  keys(): RunKey[] {
    return [...this.runs.keys()];
  }

  /** The run's series (read-only use: the bench and the owner's tests). */
  store(key: RunKey): RunSeriesStore | undefined {
    return this.runs.get(key)?.store;
  }

  ingest(key: RunKey, events: RunEvent[]): void {
    const e = this.entry(key);
    if (e.store.ingest(events) > 0) this.markDirty(e);
  }

  /** A shared store (see addRun) got new events: post them like ingested ones. */
  touched(key: RunKey): void {
    this.markDirty(this.entry(key));
  }

  /** What the transport saw for a run (a dropped stream, a lost process): shown in its header. */
  signal(key: RunKey, s: TransportSignal): void {
    const e = this.entry(key);
    e.store.signal(s);
    this.markDirty(e);
  }

  /** A banner for one run (or the whole dashboard with null); kept and re-sent after snapshots. */
  status(key: RunKey | null, level: 'info' | 'warning' | 'error', message: string): void {
    const m: HostMessage = { type: 'status', key, level, message };
    this.banners.set(key, m);
    if (this.canPost()) this.options.post(m);
  }

  /** A message from the UI, untrusted: returns false (and does nothing) when it is not valid. */
  receive(raw: unknown): boolean {
    if (this.disposed) return false;
    const v = validateUiMessage(raw);
    if (!v.ok) {
      this.options.onInvalid?.(v.error);
      return false;
    }
    const m = v.message;
    switch (m.type) {
      case 'ready':
        this.ready = true;
        this.width = m.width;
        if (this.visible) this.snapshot();
        break;
      case 'zoom':
        this.width = m.width;
        this.range = { min: m.min, max: m.max };
        if (this.canPost()) this.zoomSnapshot();
        break;
      case 'resize': {
        const old = this.width;
        this.width = m.width;
        if (m.width !== old && this.canPost() && this.downsamplingChanges(old, m.width)) this.zoomSnapshot();
        break;
      }
      case 'export':
        if (this.options.onExport) this.options.onExport(m);
        else this.status(null, 'info', this.t('Export is not available here: the browser saves the file itself.'));
        break;
    }
    return true;
  }

  setVisible(visible: boolean): void {
    const was = this.visible;
    this.visible = visible;
    if (!visible && this.options.uiReloadsWhenShown) this.ready = false;
    if (visible && !was && this.ready && !this.disposed) this.snapshot();
  }

  /** Posts pending appends now (the owner's flush before a close, and the tests). */
  flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (!this.canPost()) return;
    let snapshotDue = false;
    for (const e of this.runs.values()) {
      if (!e.dirty) continue;
      const rows = e.store.steps.length;
      if (
        e.store.rewinds !== e.sentRewinds ||
        (this.options.mode === 'compare' && e.store.configRevision !== e.sentConfig) || // the labels' diff
        rows < e.sentRows ||
        (this.range.max === null &&
          e.appendedSinceSnapshot + rows - e.sentRows > this.width * RESNAPSHOT_ROWS_PER_PIXEL)
      ) {
        snapshotDue = true;
        break;
      }
    }
    if (snapshotDue) {
      this.snapshot();
      return;
    }
    for (const e of this.runs.values()) if (e.dirty) this.postAppend(e);
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.zoomTimer) clearTimeout(this.zoomTimer);
    this.timer = this.zoomTimer = undefined;
  }

  private entry(key: RunKey): Entry {
    const e = this.runs.get(key);
    if (!e) throw new Error(`no run "${key}" in this dashboard: addRun it first`);
    return e;
  }

  /** The store's header with its AMP words in this UI's language (a store serves tabs of any). */
  private header(s: RunSeriesStore): DashboardHeader {
    const header = s.header({ t: this.t, language: this.options.language });
    header.ampSummary = ampScaling(header.ampLevel, header.lossScaleMode, this.t).summary;
    return header;
  }

  private canPost(): boolean {
    return this.ready && this.visible && !this.disposed;
  }

  private markDirty(e: Entry): void {
    e.dirty = true;
    if (!this.canPost()) return; // the snapshot on show / ready carries it
    const interval = this.options.appendIntervalMs ?? DEFAULT_INTERVAL_MS;
    if (interval <= 0) this.flush();
    else if (!this.timer) this.timer = setTimeout(() => this.flush(), interval);
  }

  private downsamplingChanges(oldWidth: number, newWidth: number): boolean {
    for (const e of this.runs.values()) {
      const n = e.store.steps.length;
      if (n > ROWS_PER_PIXEL * Math.min(oldWidth, newWidth)) return true;
    }
    return false;
  }

  private runData(e: Entry): RunData {
    const s = e.store;
    const sel = selectRows(
      s.steps.step,
      STEP_SERIES.map((n) => s.steps.series(n)),
      s.steps.overflow,
      this.range,
      this.width,
    );
    e.sentRows = s.steps.length;
    e.sentEvals = s.evals.steps.length;
    e.sentDevices = s.devices.steps.length;
    e.sentHost = s.host.steps.length;
    e.sentConfig = s.configRevision;
    e.sentNotices = s.notices.length;
    e.sentMarks = s.marks.length;
    e.sentRewinds = s.rewinds;
    e.appendedSinceSnapshot = 0;
    e.dirty = false;
    return {
      header: this.header(s),
      steps: s.stepBlock(sel.rows),
      evals: s.evalBlock(),
      devices: s.deviceBlock(),
      host: s.hostBlock(),
      config: s.config(),
      amp: ampHealth(s, this.options.window ?? AMP_WINDOW, this.t),
      notices: s.notices.slice(),
      marks: s.marks.slice(),
      totalStepRows: s.steps.length,
      downsampled: sel.downsampled,
    };
  }

  /** A snapshot for a zoom or resize: at once, or at the end of the gap after the last one (with
   * the range and width then current). */
  private zoomSnapshot(): void {
    const wait = this.lastZoomSnapshotAt + ZOOM_GAP_MS - Date.now();
    if (wait <= 0) {
      this.snapshot();
      this.lastZoomSnapshotAt = Date.now(); // the gap starts when this one is built
    } else {
      this.zoomTimer ??= setTimeout(() => {
        this.zoomTimer = undefined;
        if (this.canPost()) this.zoomSnapshot();
      }, wait);
    }
  }

  private snapshot(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const runs = [...this.runs.values()].map((e) => this.runData(e));
    if (this.options.mode === 'compare') {
      // Compare Runs labels each run with its values of the settings that differ between them.
      const differs = differingSettings([...this.runs.values()].map((e) => e.store.spec()));
      runs.forEach((r, i) => (r.differs = differs[i]));
    }
    const m: Extract<HostMessage, { type: 'snapshot' }> = {
      type: 'snapshot',
      mode: this.options.mode,
      runs,
      range: { ...this.range },
      revision: ++this.revision,
    };
    if (this.options.mode === 'compare')
      m.configDiff = configDiff([...this.runs.values()].map((e) => ({ key: e.store.key, spec: e.store.spec() })));
    if (this.options.restoreToken !== undefined) m.restore = this.options.restoreToken;
    this.options.post(m);
    for (const b of this.banners.values()) this.options.post(b);
  }

  private postAppend(e: Entry): void {
    const s = e.store;
    const rows = s.steps.length;
    const m: Extract<HostMessage, { type: 'append' }> = {
      type: 'append',
      key: s.key,
      header: this.header(s),
      amp: ampHealth(s, this.options.window ?? AMP_WINDOW, this.t),
      revision: ++this.revision,
    };
    if (rows > e.sentRows) m.steps = s.stepRange(e.sentRows, rows);
    if (s.evals.steps.length > e.sentEvals) m.evals = s.evalBlock(e.sentEvals);
    if (s.devices.steps.length > e.sentDevices) m.devices = s.deviceBlock(e.sentDevices);
    if (s.host.steps.length > e.sentHost) m.host = s.hostBlock(e.sentHost);
    const config = s.configRevision !== e.sentConfig ? s.config() : null;
    if (config) m.config = config;
    if (s.notices.length > e.sentNotices) m.notices = s.notices.slice(e.sentNotices);
    if (s.marks.length > e.sentMarks) m.marks = s.marks.slice(e.sentMarks);
    e.appendedSinceSnapshot += rows - e.sentRows;
    e.sentRows = rows;
    e.sentEvals = s.evals.steps.length;
    e.sentDevices = s.devices.steps.length;
    e.sentHost = s.host.steps.length;
    e.sentConfig = s.configRevision;
    e.sentNotices = s.notices.length;
    e.sentMarks = s.marks.length;
    e.dirty = false;
    this.options.post(m);
  }
}
