// The Runs Table panel: one webview (webview/runsTable) per scope (a target, or all of them). The
// state lives in a RunsTableModel (src/core/runs/tableModel.ts); the panel lists the scope's runs
// with the runner's `ls` (the Runs view's own listing call, which also refreshes the Runs view),
// sends the model's snapshot after each change and when the panel becomes visible again, and turns
// Compare and Delete into the existing commands (Delete with its own confirmation per run).
import * as vscode from 'vscode';
import type { ListedRunDetail } from '../../core/runs/presentation';
import type { TargetListing } from '../../core/runs/table';
import { RunsTableModel, type TableAction } from '../../core/runs/tableModel';
import { sweepStatus } from '../../core/sweeps/client';
import { runnerArgs, runRunner } from '../../core/targets/runnerCli';
import { targetsToList, type TargetDef } from '../../core/targets/model';
import { webviewPage } from '../../core/webviewPage';
import { validateTableMessage, type HostMessage } from '../../shared/runsTableProtocol';
import type { App } from '../app';
import { errorText } from '../context';
import { wording } from '../l10n';
import { bundleAssets, pageL10n, webviewOptions } from '../webviewAssets';

const VIEW_TYPE = 'ascend.runsTable';
const ALL = '*';

export class RunsTablePanel {
  private static readonly open = new Map<string, RunsTablePanel>();
  private readonly model: RunsTableModel;
  private readonly panel: vscode.WebviewPanel;
  private readonly subs: vscode.Disposable[] = [];
  private loading: Promise<void> | undefined;

  /**
   * Reveals the scope's table (a target id, or undefined for every target; with `sweepId`, only that
   * sweep's trials on the target) and lists its runs again.
   */
  static show(app: App, targetId: string | undefined, sweepId?: string): RunsTablePanel {
    const key = sweepId === undefined ? (targetId ?? ALL) : `${targetId}\u0000sweep\u0000${sweepId}`;
    let p = RunsTablePanel.open.get(key);
    if (p) p.panel.reveal();
    else {
      p = new RunsTablePanel(app, key, targetId, sweepId);
      RunsTablePanel.open.set(key, p);
    }
    void p.reload();
    return p;
  }

  private constructor(
    private readonly app: App,
    private readonly key: string,
    private readonly targetId: string | undefined,
    private readonly sweepId?: string,
  ) {
    const label = targetId === undefined ? vscode.l10n.t('all targets') : (app.ctx.target(targetId)?.label ?? targetId);
    const sweepName =
      sweepId === undefined || targetId === undefined
        ? undefined
        : (app.runs.sweeps.get(targetId, sweepId)?.name ?? sweepId);
    const title =
      sweepName === undefined
        ? vscode.l10n.t('Runs Table: {0}', label)
        : vscode.l10n.t('Runs Table: sweep {0} on {1}', sweepName, label);
    this.model = new RunsTableModel(
      title,
      targetId === undefined,
      sweepId === undefined
        ? undefined
        : {
            sweepId,
            space: this.knownSpace(sweepId),
            objective: targetId === undefined ? undefined : app.runs.sweeps.get(targetId, sweepId)?.objective,
          },
      wording(),
    );
    const uri = app.ctx.extension.extensionUri;
    this.panel = vscode.window.createWebviewPanel(VIEW_TYPE, title, vscode.ViewColumn.Active, {
      ...webviewOptions(uri),
      retainContextWhenHidden: false,
    });
    this.panel.webview.html = runsTableHtml(this.panel.webview, uri, title);
    this.subs.push(
      this.panel.webview.onDidReceiveMessage((m) => void this.onMessage(m)),
      this.panel.onDidChangeViewState(() => this.panel.visible && this.post()),
      this.panel.onDidDispose(() => this.dispose()),
    );
  }

  private post(): void {
    const msg: HostMessage = { type: 'state', state: this.model.snapshot() };
    void this.panel.webview.postMessage(msg);
  }

  private targets(): TargetDef[] {
    const { ctx } = this.app;
    if (this.targetId !== undefined) {
      const def = ctx.target(this.targetId);
      return def ? [def] : [];
    }
    return targetsToList(ctx.targets, ctx.index.byTarget().keys());
  }

  /** Lists the scope's runs (one `ls` per target, side by side); a target that fails is named, the rest shown. */
  reload(): Promise<void> {
    this.loading ??= this.list().finally(() => (this.loading = undefined));
    return this.loading;
  }

  private async list(): Promise<void> {
    const { ctx } = this.app;
    this.model.setLoading(true);
    this.post();
    const errors: string[] = [];
    const listings: TargetListing[] = [];
    await Promise.all(
      this.targets().map(async (def) => {
        try {
          await ctx.ensureRunner(def);
          const out = await runRunner<{ runs?: ListedRunDetail[] }>(ctx.transport(def), runnerArgs.ls(def.runsRoot), {
            timeoutMs: 60_000,
          });
          const runs = Array.isArray(out.runs) ? out.runs : [];
          listings.push({ targetId: def.id, targetLabel: def.label, runs });
          await ctx.index.mergeListing(def.id, runs); // the Runs view and Compare Runs see the same runs
        } catch (e) {
          errors.push(vscode.l10n.t('{0}: could not list runs ({1})', def.label, errorText(e)));
          ctx.log.warn(`runs table: ls on ${def.label} failed: ${errorText(e)}`);
        }
      }),
    );
    if (this.sweepId !== undefined) await this.readSweep(this.sweepId);
    const order = this.targets().map((t) => t.id);
    listings.sort((a, b) => order.indexOf(a.targetId) - order.indexOf(b.targetId));
    this.model.setListings(listings, errors, Date.now() / 1000);
    this.app.runs.refresh();
    this.post();
  }

  /** The space's fields from what the sweep panel or the Runs view last read (its trials' params). */
  private knownSpace(sweepId: string): string[] {
    const status = this.targetId === undefined ? undefined : this.app.runs.sweeps.status(this.targetId, sweepId);
    return [...new Set(status?.trials.flatMap((t) => Object.keys(t.params)) ?? [])];
  }

  /** sweep-status for the space and the objective; without it the table still shows the trials. */
  private async readSweep(sweepId: string): Promise<void> {
    const { ctx } = this.app;
    const def = this.targetId === undefined ? undefined : ctx.target(this.targetId);
    const dir = def && this.app.runs.sweeps.get(def.id, sweepId)?.sweep_dir;
    if (!def || !dir) return;
    try {
      const status = await sweepStatus(ctx.transport(def), dir, { timeoutMs: 60_000 });
      this.app.runs.sweeps.setStatus(def.id, status);
      this.model.setSweepScope({ sweepId, space: this.knownSpace(sweepId), objective: status.objective });
    } catch (e) {
      ctx.log.warn(`runs table: sweep-status of ${sweepId} on ${def.label} failed: ${errorText(e)}`);
    }
  }

  private async onMessage(raw: unknown): Promise<void> {
    const v = validateTableMessage(raw);
    if (!v.ok) {
      this.app.ctx.log.warn(`runs table: refused a message: ${v.error}`);
      return;
    }
    const action: TableAction = this.model.handle(v.message);
    if (v.message.type !== 'refresh') this.post();
    switch (action.type) {
      case 'none':
        return;
      case 'refresh':
        return this.reload();
      case 'compare': {
        const refs = action.runs.map((r) => ({ targetId: r.targetId, runId: r.runId }));
        await vscode.commands.executeCommand('ascend.compareRuns', refs[0], refs);
        return;
      }
      case 'delete':
        // One at a time, each through Delete Run and its confirmation (the runner's `rm`, the index).
        for (const r of action.runs)
          await vscode.commands.executeCommand('ascend.deleteRun', { targetId: r.targetId, runId: r.runId });
        return this.reload();
    }
  }

  private dispose(): void {
    RunsTablePanel.open.delete(this.key);
    for (const s of this.subs.splice(0)) s.dispose();
  }
}

/** The page (src/core/webviewPage.ts) with the Runs Table bundle (webview/runsTable: script and stylesheet). */
export function runsTableHtml(
  webview: Pick<vscode.Webview, 'asWebviewUri' | 'cspSource'>,
  extensionUri: vscode.Uri,
  title: string,
): string {
  return webviewPage({
    ...bundleAssets(webview, extensionUri, 'runsTable'),
    title,
    placeholder: vscode.l10n.t('Listing runs…'),
    l10n: pageL10n(),
  });
}

/**
 * ascend.openRunsTable: from a target (Targets view, or a Runs view group), from a sweep (its row in
 * Runs, or its panel: that sweep's trials only), or from the palette (pick a scope).
 */
export async function openRunsTableCommand(app: App, node: unknown): Promise<void> {
  const n = typeof node === 'object' && node !== null ? (node as { targetId?: unknown; sweepId?: unknown }) : {};
  const id = typeof n.targetId === 'string' ? n.targetId : undefined;
  if (id !== undefined) {
    RunsTablePanel.show(app, id, typeof n.sweepId === 'string' ? n.sweepId : undefined);
    return;
  }
  const targets = targetsToList(app.ctx.targets, app.ctx.index.byTarget().keys());
  if (targets.length <= 1) {
    RunsTablePanel.show(app, targets[0]?.id);
    return;
  }
  const picked = await vscode.window.showQuickPick(
    [
      {
        label: vscode.l10n.t('All targets'),
        description: vscode.l10n.t('{0} targets, one table', targets.length),
        id: undefined as string | undefined,
      },
      ...targets.map((t) => ({ label: t.label, description: t.description, id: t.id as string | undefined })),
    ],
    { title: vscode.l10n.t('Runs Table of which target?') },
  );
  if (picked) RunsTablePanel.show(app, picked.id);
}
