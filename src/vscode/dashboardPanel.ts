// The dashboard in VS Code: one WebviewPanel per run (or per set of compared runs), each owning a
// DashboardSession (src/core/dashboard/session.ts) that keeps the series and talks to the UI. The
// panel reads a run's history once with a bounded `attach --no-follow`, then feeds on the Run
// Monitor's live stream (no second follow of the same run). The webview is rebuilt when shown
// (retainContextWhenHidden false: no memory held by hidden panels) and gets a snapshot on `ready`;
// after a window reload the serializer reopens each panel on the same runs.
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { followRun } from '../core/runs/attach';
import { dashboardShell } from '../core/dashboard/html';
import { MAX_SPEC_BYTES, readJsonObject } from '../core/dashboard/runFiles';
import { dashboardTitle, retitled } from '../core/dashboard/title';
import { DashboardSession, type RunMeta } from '../core/dashboard/session';
import type { Translate } from '../core/l10n';
import { isLive } from '../core/runs/presentation';
import type { UiMessage } from '../shared/dashboardProtocol';
import type { RunEvent } from '../shared/eventsProtocol';
import type { App } from './app';
import { errorText } from './context';
import { runKey, type RunRef, type StreamActivity } from './runMonitor';
import { runDisplayName } from './runs';
import { bundleAssets, pageL10n, webviewOptions } from './webviewAssets';

export const DASHBOARD_VIEW_TYPE = 'ascend.dashboard';
/** vscode.l10n.t for the sentences core writes (the AMP card, the tab titles). */
const translate: Translate = (message, ...args) => vscode.l10n.t(message, ...args);
/** workspaceState key: the open dashboards, so a reload can reopen them. */
const SAVED_KEY = 'ascend.dashboards';
/** Events per `ingest` while reading history: keeps the extension host responsive. */
const BACKFILL_BATCH = 5000;

interface SavedDashboard {
  token: string;
  title: string;
  runs: RunRef[];
}

/** One panel's runs: the Run Monitor's events are held back until the history is read. */
interface Feed {
  ref: RunRef;
  key: string;
  backfilling: boolean;
  held: RunEvent[];
}

class DashboardPanel {
  readonly session: DashboardSession;
  private readonly feeds = new Map<string, Feed>(); // by runKey(ref)
  private readonly metas = new Map<string, RunMeta>(); // by the session's key, r0, r1, ...
  private readonly abort = new AbortController();

  constructor(
    private readonly app: App,
    readonly panel: vscode.WebviewPanel,
    readonly saved: SavedDashboard,
    onClosed: () => void,
  ) {
    const ctx = app.ctx;
    this.session = new DashboardSession({
      mode: saved.runs.length > 1 ? 'compare' : 'single',
      post: (m) => void panel.webview.postMessage(m),
      onExport: (m) => void this.export(m),
      onInvalid: (error) => ctx.log.warn(`dashboard "${saved.title}": refused a message from the webview: ${error}`),
      restoreToken: saved.token,
      uiReloadsWhenShown: true, // retainContextWhenHidden is false
      t: translate,
      language: vscode.env.language,
    });
    panel.webview.options = webviewOptions(ctx.extension.extensionUri);
    panel.webview.html = dashboardHtml(panel.webview, ctx.extension.extensionUri);
    panel.iconPath = vscode.Uri.joinPath(ctx.extension.extensionUri, 'media', 'icon.svg');
    this.session.setVisible(panel.visible);
    const subs = [
      panel.webview.onDidReceiveMessage((m: unknown) => this.session.receive(m)),
      // a hidden webview is destroyed (retainContextWhenHidden false): it says `ready` again when shown
      panel.onDidChangeViewState((e) => this.session.setVisible(e.webviewPanel.visible)),
    ];
    panel.onDidDispose(() => {
      for (const s of subs) s.dispose();
      this.abort.abort();
      this.session.dispose();
      onClosed();
    });
    saved.runs.forEach((ref, i) => void this.start(ref, `r${i}`));
  }

  /** The names, notes and tags its runs show now, in `saved.runs` order (after a Rename Run, an
   * edit of notes or tags): the page's headers follow. */
  showNames(shown: readonly Pick<RunMeta, 'name' | 'notes' | 'tags'>[]): void {
    shown.forEach((now, i) => {
      const key = `r${i}`;
      const meta = this.metas.get(key);
      if (!meta || sameMeta(meta, now)) return;
      const next = { ...meta, ...now };
      this.metas.set(key, next);
      this.session.addRun(key, next); // an added run's meta is replaced and re-sent
    });
  }

  covers(ref: RunRef): boolean {
    return this.saved.runs.some((r) => runKey(r) === runKey(ref));
  }

  /** An event or signal of the Run Monitor's stream. */
  activity(a: StreamActivity): void {
    const feed = this.feeds.get(runKey(a.ref));
    if (!feed) return;
    if (a.signal) this.session.signal(feed.key, a.signal);
    else if (feed.backfilling) feed.held.push(a.event);
    else this.session.ingest(feed.key, [a.event]);
  }

  private async start(ref: RunRef, key: string): Promise<void> {
    const { ctx } = this.app;
    const record = ctx.index.get(ref.targetId, ref.runId);
    const def = record && ctx.target(record.targetId);
    const meta = { ...shownMeta(this.app, ref), target: def?.label ?? ref.targetId };
    this.metas.set(key, meta);
    this.session.addRun(key, meta);
    if (!record || !def) {
      this.session.status(
        key,
        'error',
        record
          ? vscode.l10n.t('The target of run {0} ({1}) is not configured any more.', ref.runId, ref.targetId)
          : vscode.l10n.t('Run {0} is no longer in the Runs view.', ref.runId),
      );
      return;
    }
    const feed: Feed = { ref, key, backfilling: true, held: [] };
    this.feeds.set(runKey(ref), feed);
    if (def.kind === 'local') {
      // The config panel shows the run's spec.json (bounded, a regular file); elsewhere run_started's spec.
      const spec = readJsonObject(path.join(record.runDir, 'spec.json'), MAX_SPEC_BYTES);
      const store = this.session.store(key);
      if (spec.ok === true && store) {
        store.setSpecFile(spec.value);
        this.session.touched(key);
      }
    }
    try {
      await ctx.ensureRunner(def);
      // `--no-follow` stops at a run_finished; a resumed run's log goes on after it, so read on
      // from there. Events after the end of this read come from the monitor's stream (held above).
      let since = 0;
      for (;;) {
        let last: RunEvent | undefined;
        let batch: RunEvent[] = [];
        for await (const event of followRun({
          runner: ctx.transport(def),
          runDir: record.runDir,
          since,
          follow: false,
          maxRetries: 2,
          signal: this.abort.signal,
        })) {
          batch.push(event);
          last = event;
          if (batch.length >= BACKFILL_BATCH) {
            this.session.ingest(key, batch);
            batch = [];
          }
        }
        this.session.ingest(key, batch);
        if (last?.type !== 'run_finished' || this.abort.signal.aborted) break;
        since = last.seq;
      }
    } catch (e) {
      if (!this.abort.signal.aborted) {
        ctx.log.warn(`dashboard: could not read the events of ${runKey(ref)}: ${errorText(e)}`);
        this.session.status(key, 'error', vscode.l10n.t("Could not read the run's events: {0}", errorText(e)));
      }
    } finally {
      feed.backfilling = false;
      if (!this.abort.signal.aborted) this.session.ingest(key, feed.held.splice(0));
    }
    // A live run that nothing streams (the monitor gave up, or was never started): stream it.
    if (!this.abort.signal.aborted && isLive(this.app.runs.state(record)) && !this.app.monitor.isFollowing(ref))
      this.app.monitor.follow(record);
  }

  private async export(m: Extract<UiMessage, { type: 'export' }>): Promise<void> {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const uri = await vscode.window.showSaveDialog({
      title: m.format === 'csv' ? vscode.l10n.t('Export the series as CSV') : vscode.l10n.t('Save the chart as PNG'),
      defaultUri: folder ? vscode.Uri.joinPath(folder, m.suggestedName) : undefined,
      filters: m.format === 'csv' ? { CSV: ['csv'] } : { [vscode.l10n.t('PNG image')]: ['png'] },
    });
    if (!uri) return;
    const bytes =
      m.format === 'csv' ? Buffer.from(m.data, 'utf8') : Buffer.from(m.data.slice(m.data.indexOf(',') + 1), 'base64');
    try {
      await vscode.workspace.fs.writeFile(uri, bytes);
      this.app.ctx.log.info(`dashboard: exported ${bytes.length} bytes to ${uri.fsPath}`);
    } catch (e) {
      void vscode.window.showErrorMessage(vscode.l10n.t('Could not save {0}: {1}', uri.fsPath, errorText(e)));
    }
  }
}

/** Every open dashboard panel; restores them after a reload. */
export class Dashboards implements vscode.Disposable {
  private readonly panels = new Set<DashboardPanel>();
  private readonly subscriptions: vscode.Disposable[];
  private shuttingDown = false;

  constructor(private readonly app: App) {
    this.subscriptions = [
      app.monitor.onStreamActivity((a) => {
        for (const p of this.panels) p.activity(a);
      }),
      // The Runs view redraws on every change of the run list or its names (and on live progress:
      // retitle compares first, so a redraw that renamed nothing costs no more than the names).
      app.runs.onDidChangeTreeData(() => this.retitle()),
      vscode.window.registerWebviewPanelSerializer(DASHBOARD_VIEW_TYPE, {
        deserializeWebviewPanel: async (panel, state) => this.restore(panel, state),
      }),
    ];
  }

  /** Opens (or reveals) the dashboard of these runs: one run, or a compare dashboard. */
  open(refs: RunRef[]): void {
    const unique = [...new Map(refs.map((r) => [runKey(r), { targetId: r.targetId, runId: r.runId }])).values()];
    if (unique.length === 0) return;
    const same = [...this.panels].find(
      (p) => p.saved.runs.length === unique.length && unique.every((r) => p.covers(r)),
    );
    if (same) {
      same.panel.reveal();
      return;
    }
    const title = this.title(unique);
    const panel = vscode.window.createWebviewPanel(DASHBOARD_VIEW_TYPE, title, vscode.ViewColumn.Active, {
      ...webviewOptions(this.app.ctx.extension.extensionUri),
      retainContextWhenHidden: false,
    });
    this.adopt(panel, { token: randomBytes(12).toString('hex'), title, runs: unique });
  }

  private title(refs: RunRef[]): string {
    return dashboardTitle(
      refs.map((r) => runDisplayName(this.app.ctx, r)),
      translate,
    );
  }

  /** A rename (or a new run that makes a name repeat) changes the names runs show: open tabs and their pages follow. */
  private retitle(): void {
    const panels = [...this.panels];
    const names = panels.map((p) => p.saved.runs.map((r) => runDisplayName(this.app.ctx, r)));
    panels.forEach((p) => p.showNames(p.saved.runs.map((r) => shownMeta(this.app, r))));
    const changes = retitled(
      panels.map((p, i) => ({ title: p.saved.title, names: names[i] })),
      translate,
    );
    if (changes.length === 0) return;
    for (const [i, title] of changes) {
      panels[i].panel.title = title;
      panels[i].saved.title = title; // a reload restores it by token, or by this title
    }
    const byToken = new Map(panels.map((p) => [p.saved.token, p.saved]));
    void this.save(this.savedList().map((s) => byToken.get(s.token) ?? s));
  }

  private adopt(panel: vscode.WebviewPanel, saved: SavedDashboard): void {
    void this.save([...this.savedList().filter((s) => s.token !== saved.token), saved]);
    const p = new DashboardPanel(this.app, panel, saved, () => {
      this.panels.delete(p);
      // closed by the user: forget it; closed by a reload: keep it to restore
      if (!this.shuttingDown) void this.save(this.savedList().filter((s) => s.token !== saved.token));
    });
    this.panels.add(p);
  }

  /** After a reload: the same runs again. The token comes from the UI's saved state; a UI that did
   * not keep it is matched by title. Anything unrecognised is closed (the state is untrusted). */
  private restore(panel: vscode.WebviewPanel, state: unknown): void {
    const token =
      typeof state === 'object' && state !== null && typeof (state as { restore?: unknown }).restore === 'string'
        ? (state as { restore: string }).restore
        : undefined;
    const open = new Set([...this.panels].map((p) => p.saved.token));
    const list = this.savedList().filter((s) => !open.has(s.token));
    const saved = list.find((s) => s.token === token) ?? list.find((s) => s.title === panel.title);
    if (!saved) {
      this.app.ctx.log.info(`dashboard "${panel.title}": nothing to restore it from; closed`);
      panel.dispose();
      return;
    }
    this.adopt(panel, saved);
  }

  private savedList(): SavedDashboard[] {
    const raw = this.app.ctx.extension.workspaceState.get<unknown>(SAVED_KEY);
    if (!Array.isArray(raw)) return [];
    return raw.filter(
      (s): s is SavedDashboard =>
        typeof s === 'object' &&
        s !== null &&
        typeof s.token === 'string' &&
        typeof s.title === 'string' &&
        Array.isArray(s.runs) &&
        s.runs.every(
          (r: unknown) => typeof (r as RunRef)?.targetId === 'string' && typeof (r as RunRef)?.runId === 'string',
        ),
    );
  }

  private save(list: SavedDashboard[]): Thenable<void> {
    return this.app.ctx.extension.workspaceState.update(SAVED_KEY, list);
  }

  dispose(): void {
    // the window is closing or reloading: the panels go with it and come back through the serializer
    this.shuttingDown = true;
    for (const s of this.subscriptions) s.dispose();
  }
}

/** The HTML shell (src/core/dashboard/html.ts) with this extension's bundle. */
export function dashboardHtml(
  webview: Pick<vscode.Webview, 'asWebviewUri' | 'cspSource'>,
  extensionUri: vscode.Uri,
): string {
  return dashboardShell(bundleAssets(webview, extensionUri, 'dashboard'), pageL10n());
}

const registry = new WeakMap<App, Dashboards>();

/** Creates the app's dashboards (and their reload serializer) once; called at activation. */
export function registerDashboards(app: App): Dashboards {
  let d = registry.get(app);
  if (!d) {
    d = app.ctx.register(new Dashboards(app));
    registry.set(app, d);
  }
  return d;
}

/** What a run's header shows of it: its display name, and the notes and tags of its meta.json. */
function shownMeta(app: App, ref: RunRef): Pick<RunMeta, 'name' | 'notes' | 'tags'> {
  const meta = app.ctx.index.get(ref.targetId, ref.runId)?.meta;
  return { name: runDisplayName(app.ctx, ref), notes: meta?.notes ?? '', tags: meta?.tags ?? [] };
}

function sameMeta(a: Pick<RunMeta, 'name' | 'notes' | 'tags'>, b: Pick<RunMeta, 'name' | 'notes' | 'tags'>): boolean {
  return (
    a.name === b.name && (a.notes ?? '') === (b.notes ?? '') && (a.tags ?? []).join('\n') === (b.tags ?? []).join('\n')
  );
}
