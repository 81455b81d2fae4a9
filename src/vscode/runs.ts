// The Runs view: runs grouped by target, newest first, with their state icon, a description
// (epoch, loss, best accuracy) and a tooltip; live runs update as their events arrive.
import * as vscode from 'vscode';
import {
  canDelete,
  displayNames,
  runContextValue,
  runDescription,
  runIcon,
  runTooltip,
  shownState,
  stateWord,
  type ShownState,
} from '../core/runs/presentation';
import type { RunRecord } from '../core/runs/runIndex';
import { describe } from '../core/runs/state';
import { groupRuns, sweepOf } from '../core/sweeps/grouping';
import { SweepStore } from '../core/sweeps/store';
import { sweepTreeItem } from './sweeps/treeItem';
import type { Ctx } from './context';
import { translate, wording } from './l10n';
import { runKey, type RunMonitor, type RunRef } from './runMonitor';

export type RunsNode =
  | { kind: 'group'; targetId: string }
  | { kind: 'sweep'; targetId: string; sweepId: string }
  | { kind: 'run'; targetId: string; runId: string };

export class RunsView implements vscode.TreeDataProvider<RunsNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<RunsNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly subscriptions: vscode.Disposable[];
  /** Each target's sweeps: their trials are shown beneath them (sweeps/listing.ts fills it). */
  readonly sweeps = new SweepStore();

  constructor(
    private readonly ctx: Ctx,
    private readonly monitor: RunMonitor,
  ) {
    this.subscriptions = [monitor.onDidChange(() => this.refresh()), ctx.onDidChangeTargets(() => this.refresh())];
  }

  refresh(): void {
    this.changed.fire(undefined);
  }

  /** The state a run shows now: its live stream's, else the index's. */
  state(record: RunRecord): ShownState {
    return shownState(record, this.monitor.view(record));
  }

  getChildren(node?: RunsNode): RunsNode[] {
    const byTarget = this.ctx.index.byTarget();
    if (!node) {
      // Targets in their configured order, then ids the index knows but settings no longer list.
      const order = this.ctx.targets.map((t) => t.id);
      const ids = [...byTarget.keys()].sort((a, b) => rank(order, a) - rank(order, b) || a.localeCompare(b));
      return ids.map((targetId) => ({ kind: 'group', targetId }));
    }
    const top = groupRuns(byTarget.get(node.targetId) ?? [], this.sweeps.summaries(node.targetId));
    if (node.kind === 'group')
      return top.map((t) =>
        t.kind === 'run'
          ? { kind: 'run', targetId: node.targetId, runId: t.record.runId }
          : { kind: 'sweep', targetId: node.targetId, sweepId: t.group.sweepId },
      );
    if (node.kind === 'sweep') {
      const g = top.find((t) => t.kind === 'sweep' && t.group.sweepId === node.sweepId);
      return g?.kind === 'sweep'
        ? g.group.trials.map((r) => ({ kind: 'run', targetId: r.targetId, runId: r.runId }))
        : [];
    }
    return [];
  }

  getTreeItem(node: RunsNode): vscode.TreeItem {
    if (node.kind === 'group') {
      const def = this.ctx.target(node.targetId);
      const runs = this.ctx.index.byTarget().get(node.targetId) ?? [];
      const item = new vscode.TreeItem(def?.label ?? node.targetId, vscode.TreeItemCollapsibleState.Expanded);
      item.id = `group/${node.targetId}`;
      item.description =
        (runs.length === 1 ? vscode.l10n.t('1 run') : vscode.l10n.t('{0} runs', runs.length)) +
        (def ? '' : vscode.l10n.t(' · target not configured'));
      item.iconPath = new vscode.ThemeIcon(def?.kind === 'ssh' || node.targetId.startsWith('ssh:') ? 'remote' : 'vm');
      item.contextValue = 'runGroup';
      return item;
    }
    if (node.kind === 'sweep') {
      const top = groupRuns(this.ctx.index.byTarget().get(node.targetId) ?? [], this.sweeps.summaries(node.targetId));
      const g = top.find((t) => t.kind === 'sweep' && t.group.sweepId === node.sweepId);
      return sweepTreeItem(node, g?.kind === 'sweep' ? g.group : { sweepId: node.sweepId, sweep: null, trials: [] });
    }
    const record = this.ctx.index.get(node.targetId, node.runId);
    const item = new vscode.TreeItem(runDisplayName(this.ctx, node), vscode.TreeItemCollapsibleState.None);
    item.id = `run/${runKey(node)}`;
    if (!record) return item;
    const view = this.monitor.view(record);
    const state = this.state(record);
    const icon = runIcon(state, record);
    item.iconPath = new vscode.ThemeIcon(icon.id, icon.color ? new vscode.ThemeColor(icon.color) : undefined);
    item.description = runDescription(
      (view && describe(view, translate)) || record.description || stateWord(state, translate),
      record,
      { state, health: record.health },
      translate,
    );
    const targetLabel = this.ctx.target(record.targetId)?.label ?? record.targetId;
    item.tooltip = runTooltip(record, targetLabel, state, undefined, record.health, wording());
    item.contextValue = runContextValue(state);
    return item;
  }

  getParent(node: RunsNode): RunsNode | undefined {
    if (node.kind === 'group') return undefined;
    const record = node.kind === 'run' ? this.ctx.index.get(node.targetId, node.runId) : undefined;
    const sweepId = record && sweepOf(record);
    return sweepId ? { kind: 'sweep', targetId: node.targetId, sweepId } : { kind: 'group', targetId: node.targetId };
  }

  /** Whether Delete Run is allowed for this run now. */
  deletable(ref: RunRef): boolean {
    const r = this.ctx.index.get(ref.targetId, ref.runId);
    return r !== undefined && canDelete(this.state(r)) && !this.monitor.isFollowing(ref);
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.changed.dispose();
  }
}

/**
 * The name a run shows everywhere (Runs view, dashboard and checkpoint explorer titles): its meta
 * name, else the spec's, else its id, with its id's last 4 hex digits when another run of its
 * target would show the same (the runner's `display_name` rule, so a fresh run is named as `ls`
 * will name it).
 */
export function runDisplayName(ctx: Pick<Ctx, 'index'>, ref: RunRef): string {
  const siblings = ctx.index.byTarget().get(ref.targetId) ?? [];
  return displayNames(siblings).get(ref.runId) ?? ctx.index.get(ref.targetId, ref.runId)?.name ?? ref.runId;
}

function rank(order: string[], id: string): number {
  const i = order.indexOf(id);
  return i < 0 ? order.length : i;
}
