// The Sweep panel: one webview (webview/sweep) per sweep and target. The host polls sweep-status
// every few seconds while the sweep runs (and once when it has ended), sends the checked document
// as one snapshot, and acts on the UI's clicks (validated, src/shared/sweepProtocol.ts).
import * as vscode from 'vscode';
import { sweepStatus } from '../../core/sweeps/client';
import { withTrialReasons } from '../../core/sweeps/trialReason';
import { webviewPage } from '../../core/webviewPage';
import { validateSweepUiMessage, type SweepPanelState } from '../../shared/sweepProtocol';
import type { App } from '../app';
import { errorText } from '../context';
import { wording } from '../l10n';
import { bundleAssets, pageL10n, webviewOptions } from '../webviewAssets';
import type { SweepRef } from './treeItem';

const VIEW_TYPE = 'ascend.sweep';
/** How often a running sweep's status is read again. */
const POLL_MS = 3000;

export interface SweepActions {
  fineTuneBest(ref: SweepRef): Promise<void>;
  stop(ref: SweepRef): Promise<void>;
}

export class SweepPanel {
  private static readonly open = new Map<string, SweepPanel>();
  private readonly panel: vscode.WebviewPanel;
  private state: SweepPanelState;
  private timer: NodeJS.Timeout | undefined;
  private reading = false;
  private disposed = false;

  static show(app: App, ref: SweepRef, actions: SweepActions): SweepPanel {
    const key = `${ref.targetId}\u0000${ref.sweepId}`;
    let p = SweepPanel.open.get(key);
    if (p) p.panel.reveal();
    else {
      p = new SweepPanel(app, ref, actions);
      SweepPanel.open.set(key, p);
      p.panel.onDidDispose(() => {
        p!.disposed = true;
        clearTimeout(p!.timer);
        SweepPanel.open.delete(key);
      });
    }
    void p.poll();
    return p;
  }

  private constructor(
    private readonly app: App,
    private readonly ref: SweepRef,
    private readonly actions: SweepActions,
  ) {
    const def = app.ctx.target(ref.targetId);
    const name = app.runs.sweeps.get(ref.targetId, ref.sweepId)?.name ?? ref.sweepId;
    this.state = { target: def?.label ?? ref.targetId, status: null, error: null };
    const uri = app.ctx.extension.extensionUri;
    this.panel = vscode.window.createWebviewPanel(
      VIEW_TYPE,
      vscode.l10n.t('Sweep {0}', name),
      vscode.ViewColumn.Active,
      {
        ...webviewOptions(uri),
        retainContextWhenHidden: false,
      },
    );
    this.panel.webview.html = sweepHtml(this.panel.webview, uri);
    this.panel.webview.onDidReceiveMessage((m) => void this.onMessage(m));
    this.panel.onDidChangeViewState(() => this.panel.visible && this.post());
  }

  private post(): void {
    void this.panel.webview.postMessage({ type: 'state', state: this.state });
  }

  private async onMessage(raw: unknown): Promise<void> {
    const m = validateSweepUiMessage(raw);
    if (!m) return;
    try {
      if (m.type === 'ready') this.post();
      else if (m.type === 'fineTuneBest') await this.actions.fineTuneBest(this.ref);
      else if (m.type === 'openTable') await vscode.commands.executeCommand('ascend.openRunsTable', this.ref);
      else if (m.type === 'stop') {
        await this.actions.stop(this.ref);
        await this.poll();
      } else if (m.type === 'openTrial') {
        const trial = this.state.status?.trials.find((t) => t.number === m.number);
        if (trial?.run_id)
          await vscode.commands.executeCommand('ascend.openDashboard', {
            targetId: this.ref.targetId,
            runId: trial.run_id,
          });
      }
    } catch (e) {
      void vscode.window.showErrorMessage(vscode.l10n.t('Ascend: {0}', errorText(e)));
    }
  }

  /** Reads sweep-status once, and again in POLL_MS while the sweep runs. */
  private async poll(): Promise<void> {
    if (this.reading || this.disposed) return;
    clearTimeout(this.timer);
    this.reading = true;
    const { ctx } = this.app;
    const def = ctx.target(this.ref.targetId);
    const dir = this.app.runs.sweeps.get(this.ref.targetId, this.ref.sweepId)?.sweep_dir;
    try {
      if (!def) throw new Error(vscode.l10n.t('the target {0} is not configured any more', this.ref.targetId));
      if (!dir)
        throw new Error(
          vscode.l10n.t('sweep {0} is not listed on {1} (Refresh the Runs view)', this.ref.sweepId, def.label),
        );
      await ctx.ensureRunner(def);
      const status = await sweepStatus(ctx.transport(def), dir, { timeoutMs: 60_000 });
      this.app.runs.sweeps.setStatus(this.ref.targetId, status);
      this.app.runs.refresh();
      // The page shows a trial's reason as its row's tooltip: worded here, where the runner's codes are.
      this.state = { ...this.state, status: withTrialReasons(status, wording()), error: null };
    } catch (e) {
      this.state = { ...this.state, error: `sweep-status: ${errorText(e)}` };
      ctx.log.warn(`sweep panel ${this.ref.sweepId}: ${errorText(e)}`);
    } finally {
      this.reading = false;
    }
    if (this.disposed) return;
    this.post();
    const running = this.state.status === null || this.state.status.state === 'running';
    if (running) this.timer = setTimeout(() => void this.poll(), POLL_MS);
  }
}

export function sweepHtml(
  webview: Pick<vscode.Webview, 'asWebviewUri' | 'cspSource'>,
  extensionUri: vscode.Uri,
): string {
  return webviewPage({
    ...bundleAssets(webview, extensionUri, 'sweep'),
    title: vscode.l10n.t('Sweep'),
    placeholder: vscode.l10n.t('Loading…'),
    l10n: pageL10n(),
  });
}
