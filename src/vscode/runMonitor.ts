// One `followRun` per live run: events feed the run's state machine (runState) and the persisted
// index (runIndex); the status bar shows the live run; notifications say how runs end. A re-attach
// replays the run's log from the start so totals and the ETA are right, and notifies only about
// events newer than what the index had already seen.
import * as vscode from 'vscode';
import { FollowError, followRun } from '../core/runs/attach';
import type { RunRecord } from '../core/runs/runIndex';
import {
  lostNotice,
  runnerErrorSentence,
  RunNotices,
  specProblemDetails,
  streamStoppedNotice,
  type Notice,
  type NoticeAction,
} from '../core/runs/notices';
import { displayNames, finishedStatusText, statusBarText } from '../core/runs/presentation';
import { applyEvent, applySignal, describe, initialView, type RunView, type TransportSignal } from '../core/runs/state';
import type { CommandId } from '../shared/commands';
import { isKnownEvent, runHealth, type RunEvent, type RunFinishedEvent, type RunState } from '../shared/eventsProtocol';
import { errorText, type Ctx } from './context';
import { problemWording, translate } from './l10n';
import { readRunCheckpoints } from '../core/checkpoints/runInfo';

/** Names one run: the key of the index and of live streams. */
export interface RunRef {
  targetId: string;
  runId: string;
}

export const runKey = (r: RunRef) => `${r.targetId}/${r.runId}`;

/** One event, or one transport signal, of a run's stream. */
export type StreamActivity =
  { ref: RunRef; event: RunEvent; signal?: undefined } | { ref: RunRef; signal: TransportSignal; event?: undefined };

interface Live {
  ref: RunRef;
  name: string;
  view: RunView;
  abort: AbortController;
  /** Events up to this seq were seen before this attach: no notifications for them. */
  notifyAfter: number;
  notices: RunNotices;
  lastPersist: number;
  /** Flushes a burst of warnings once the stream is quiet for BURST_QUIET_MS. */
  burstTimer?: NodeJS.Timeout;
}

const UI_INTERVAL_MS = 250;
/** Warnings held for one notification are shown this long after the last one if nothing else comes. */
const BURST_QUIET_MS = 1500;
/** How long the status bar shows how the last run ended, once no run is live. */
const FINISHED_SHOWN_MS = 60_000;
const PERSIST_INTERVAL_MS = 2000;

export class RunMonitor implements vscode.Disposable {
  private readonly live = new Map<string, Live>();
  /** The last view of every run streamed in this session (kept after it ends, for the Runs view). */
  private readonly views = new Map<string, RunView>();
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  /** Every event and transport signal of every stream, as it arrives (the dashboards feed on it). */
  private readonly activity = new vscode.EventEmitter<StreamActivity>();
  readonly onStreamActivity = this.activity.event;
  private readonly statusBar: vscode.StatusBarItem;
  private uiTimer: NodeJS.Timeout | undefined;
  /** The run the status bar shows: the one that had the latest event. */
  private shown: string | undefined;
  /** The last run that ended, shown in the status bar for a while when nothing is live. */
  private lastFinished:
    | { ref: RunRef; status: RunFinishedEvent['status']; health: ReturnType<typeof runHealth>; until: number }
    | undefined;

  constructor(
    private readonly ctx: Ctx,
    /** Runs a notification action for a run (Show Console, Show Checkpoints). */
    private readonly onAction: (action: Exclude<NoticeAction, 'Open Dashboard' | 'Reattach'>, ref: RunRef) => void,
  ) {
    this.statusBar = vscode.window.createStatusBarItem('ascend.liveRun', vscode.StatusBarAlignment.Left, 50);
    this.statusBar.name = 'Ascend Fine-Tune run';
  }

  view(ref: RunRef): RunView | undefined {
    return this.views.get(runKey(ref));
  }

  isFollowing(ref: RunRef): boolean {
    return this.live.has(runKey(ref));
  }

  /** Starts streaming a run (again, with `restart`); a no-op when it is already streaming. */
  follow(record: RunRecord, opts: { restart?: boolean; launched?: boolean } = {}): void {
    // A listing that finishes after deactivation (it now waits on sweep-ls too) must not start an
    // attach nobody will stop: that process would outlive the extension.
    if (this.disposed) return;
    const key = runKey(record);
    const existing = this.live.get(key);
    if (existing && !opts.restart) return;
    existing?.abort.abort();
    const live: Live = {
      ref: { targetId: record.targetId, runId: record.runId },
      name: record.name ?? record.runId,
      view: initialView(),
      abort: new AbortController(),
      notifyAfter: opts.launched ? 0 : record.lastSeq,
      notices: new RunNotices(record.name ?? record.runId, translate, vscode.env.language),
      lastPersist: 0,
    };
    this.live.set(key, live);
    this.views.set(key, live.view);
    this.changedSoon();
    void this.stream(live, record);
  }

  /** Stops streaming (the run itself goes on). */
  unfollow(ref: RunRef): void {
    this.live.get(runKey(ref))?.abort.abort();
  }

  private async stream(live: Live, record: RunRecord): Promise<void> {
    const key = runKey(live.ref);
    const def = this.ctx.target(record.targetId);
    const log = this.ctx.log;
    if (!def) {
      log.warn(`run ${key}: target ${record.targetId} is not configured any more; not streaming`);
      this.live.delete(key);
      return;
    }
    log.info(`streaming ${key} from ${def.label} (${record.runDir})`);
    // Events this stream delivered; it replays from seq 1, so with no gap or double it ends equal to the last seq.
    let received = 0;
    try {
      await this.ctx.ensureRunner(def);
      for await (const event of followRun({
        runner: this.ctx.transport(def),
        runDir: record.runDir,
        since: 0,
        maxRetries: 8,
        signal: live.abort.signal,
        onReconnect: (info) => {
          log.warn(
            `run ${key}: ${info.reason}; re-attaching after seq ${info.since} in ${info.delayMs} ms (attempt ${info.attempt})`,
          );
          this.update(live, applySignal(live.view, { kind: 'dropped' }));
          this.activity.fire({ ref: live.ref, signal: { kind: 'dropped' } });
        },
        onBadLine: (line, error) =>
          log.warn(`run ${key}: skipped a bad event line (${error.message}): ${line.slice(0, 200)}`),
        onRunnerWarning: (w) => log.warn(`run ${key}: attach ${w.kind}: ${w.message}`),
        onGap: (expected, got) => log.error(`run ${key}: events jumped from seq ${expected} to ${got}`),
      })) {
        received++;
        this.update(live, applyEvent(live.view, event));
        this.activity.fire({ ref: live.ref, event });
        if (isKnownEvent(event) && event.type === 'run_finished') this.finished(live, event);
        if (event.seq > live.notifyAfter) {
          for (const n of live.notices.event(event, this.ctx.settings.notifyWarnings)) this.notify(n, live.ref);
          this.holdBurst(live);
        }
      }
    } catch (e) {
      if (e instanceof FollowError && e.info?.kind === 'lost') {
        this.update(live, applySignal(live.view, { kind: 'lost' }));
        this.activity.fire({ ref: live.ref, signal: { kind: 'lost' } });
        this.notify(lostNotice(live.name, translate), live.ref);
      } else if (!live.abort.signal.aborted) {
        log.error(
          `run ${key}: stopped streaming: ${errorText(e)}${e instanceof FollowError && e.stderrTail ? `\n${e.stderrTail}` : ''}`,
        );
        const sentence =
          e instanceof FollowError && e.info ? runnerErrorSentence(e.info, translate, vscode.env.language) : undefined;
        this.notify(streamStoppedNotice(live.name, sentence ?? errorText(e), translate), live.ref);
      }
    } finally {
      clearTimeout(live.burstTimer);
      for (const n of live.notices.flush(this.ctx.settings.notifyWarnings)) this.notify(n, live.ref);
      if (this.live.get(key) === live) this.live.delete(key);
      await this.persist(live, true);
      log.info(
        `stream of ${key} ended (${live.view.phase}${live.view.status ? ` ${live.view.status}` : ''}, seq ${live.view.lastSeq}, ${received} events)`,
      );
      this.changedSoon();
    }
  }

  /** Warnings held for one notification: shown once the stream has been quiet a moment. */
  private holdBurst(live: Live): void {
    clearTimeout(live.burstTimer);
    if (!live.notices.holding) return;
    live.burstTimer = setTimeout(() => {
      for (const n of live.notices.flush(this.ctx.settings.notifyWarnings)) this.notify(n, live.ref);
    }, BURST_QUIET_MS);
  }

  /** The run's end: the index keeps its verdict, the status bar shows it for a while. */
  private finished(live: Live, event: RunFinishedEvent): void {
    const health = runHealth(event.health);
    if (health) void this.ctx.index.annotate(live.ref.targetId, live.ref.runId, { health });
    this.lastFinished = { ref: live.ref, status: event.status, health, until: Date.now() + FINISHED_SHOWN_MS };
    setTimeout(() => this.changedSoon(), FINISHED_SHOWN_MS + 100).unref?.();
  }

  private update(live: Live, view: RunView): void {
    live.view = view;
    const key = runKey(live.ref);
    this.views.set(key, view);
    this.shown = key;
    if (Date.now() - live.lastPersist > PERSIST_INTERVAL_MS) void this.persist(live, false);
    this.changedSoon();
  }

  /** The index learns the stream position, description and state (throttled while streaming). */
  private async persist(live: Live, final: boolean): Promise<void> {
    live.lastPersist = Date.now();
    const v = live.view;
    let state: RunState | undefined;
    if (v.phase === 'finished') state = v.status;
    else if (v.phase === 'lost') state = 'lost';
    else if (v.phase === 'running' && !final) state = 'running';
    try {
      await this.ctx.index.progress(
        live.ref.targetId,
        live.ref.runId,
        v.lastSeq,
        describe(v, translate) || undefined,
        state,
      );
    } catch (e) {
      this.ctx.log.warn(`could not save the progress of ${runKey(live.ref)}: ${errorText(e)}`);
    }
  }

  private notify(n: Notice, ref: RunRef): void {
    const show =
      n.severity === 'error'
        ? vscode.window.showErrorMessage
        : n.severity === 'warning'
          ? vscode.window.showWarningMessage
          : vscode.window.showInformationMessage;
    // Buttons show translated labels; the choice maps back to the action id.
    const labels = n.actions.map((id) => ({ id, title: actionLabel(id) }));
    void show(n.message, ...labels).then((picked) => {
      const a = picked?.id;
      if (a === 'Show All') {
        void this.details(n, ref).then((details) => {
          for (const d of details) this.ctx.log.info(`run ${runKey(ref)}: ${d}`);
          // the headline without its "(+N more)" (English or translated): the details list them all
          void show(n.message.replace(/\s*[(（]\+\d+[^)）]*[)）]$/, ''), { modal: true, detail: details.join('\n\n') });
        });
      } else if (a === 'Open Dashboard')
        void vscode.commands.executeCommand('ascend.openDashboard' satisfies CommandId, ref);
      else if (a === 'Reattach') void vscode.commands.executeCommand('ascend.reattach' satisfies CommandId, ref);
      else if (a) this.onAction(a, ref);
    });
  }

  /**
   * What "Show All" lists. A spec's problems (the runner's English) are worded in the display
   * language against the run's spec.json, read from the target now: the local checker words each
   * problem it finds there too; without the spec only a path missing on the target is worded.
   */
  private async details(n: Notice, ref: RunRef): Promise<string[]> {
    const wording = problemWording();
    if (!n.problems || !wording) return n.details ?? [n.message];
    const record = this.ctx.index.get(ref.targetId, ref.runId);
    const def = this.ctx.target(ref.targetId);
    let spec: unknown;
    if (record && def) {
      try {
        await this.ctx.ensureRunner(def);
        spec = (await readRunCheckpoints(this.ctx.python(def), record.runDir, { timeoutMs: 30_000 })).spec ?? undefined;
      } catch (e) {
        this.ctx.log.warn(`run ${runKey(ref)}: spec.json not read to word its problems: ${errorText(e)}`);
      }
    }
    return specProblemDetails(n.problems, translate, { wording, spec });
  }

  private changedSoon(): void {
    if (this.uiTimer) return;
    this.uiTimer = setTimeout(() => {
      this.uiTimer = undefined;
      this.renderStatusBar();
      this.changed.fire();
    }, UI_INTERVAL_MS);
  }

  /** A run was renamed (or retagged): the status bar shows names as the Runs view does. */
  renamed(): void {
    this.changedSoon();
  }

  /** The run's display name now (a rename after the attach shows at once), as the Runs view labels it. */
  private nameOf(ref: RunRef, fallback = ref.runId): string {
    const siblings = this.ctx.index.byTarget().get(ref.targetId) ?? [];
    return displayNames(siblings).get(ref.runId) ?? fallback;
  }

  private renderStatusBar(): void {
    const live = [...this.live.values()];
    if (live.length === 0) {
      const f = this.lastFinished;
      if (!f || Date.now() > f.until) {
        this.statusBar.hide();
        return;
      }
      const shown = finishedStatusText(this.nameOf(f.ref), f.status, f.health, translate);
      this.statusBar.text = shown.text;
      this.statusBar.backgroundColor = shown.warning
        ? new vscode.ThemeColor('statusBarItem.warningBackground')
        : undefined;
      this.statusBar.tooltip = vscode.l10n.t('Ascend run {0}\nClick to open its dashboard.', f.ref.runId);
      this.statusBar.command = {
        title: vscode.l10n.t('Open Dashboard'),
        command: 'ascend.openDashboard' satisfies CommandId,
        arguments: [f.ref],
      };
      this.statusBar.show();
      return;
    }
    this.statusBar.backgroundColor = undefined;
    const run = (this.shown && this.live.get(this.shown)) || live[0];
    const more = live.length > 1 ? ` (+${live.length - 1})` : '';
    this.statusBar.text = statusBarText(this.nameOf(run.ref, run.name), run.view, translate) + more;
    this.statusBar.tooltip = vscode.l10n.t(
      'Ascend run {0} on {1}\nClick to open its dashboard.',
      run.ref.runId,
      this.ctx.target(run.ref.targetId)?.label ?? run.ref.targetId,
    );
    this.statusBar.command = {
      title: vscode.l10n.t('Open Dashboard'),
      command: 'ascend.openDashboard' satisfies CommandId,
      arguments: [run.ref],
    };
    this.statusBar.show();
  }

  private disposed = false;

  dispose(): void {
    this.disposed = true;
    for (const l of this.live.values()) l.abort.abort();
    this.live.clear();
    if (this.uiTimer) clearTimeout(this.uiTimer);
    this.statusBar.dispose();
    this.changed.dispose();
    this.activity.dispose();
  }
}

/** vscode.l10n.t for the core's sentences (src/core/l10n.ts). */

/** A notice action's button label in the display language. */
function actionLabel(id: NoticeAction): string {
  switch (id) {
    case 'Open Dashboard':
      return vscode.l10n.t('Open Dashboard');
    case 'Show Checkpoints':
      return vscode.l10n.t('Show Checkpoints');
    case 'Show Console':
      return vscode.l10n.t('Show Console');
    case 'Reattach':
      return vscode.l10n.t('Reattach');
    case 'Show All':
      return vscode.l10n.t('Show All');
  }
}
