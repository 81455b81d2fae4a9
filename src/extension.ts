// Entry point: builds the lifetime owner, the views and the commands, then lists the targets' runs
// and re-attaches to the live ones. All decisions live in src/core; this is wiring.
import * as vscode from 'vscode';
import type { NoticeAction } from './core/runs/notices';
import { VIEWS } from './shared/commands';
import type { App } from './vscode/app';
import { CheckpointsView } from './vscode/checkpoints/view';
import { listRuns, registerCommands } from './vscode/commands';
import { Ctx } from './vscode/context';
import { RunMonitor, type RunRef } from './vscode/runMonitor';
import { RunsView } from './vscode/runs';
import { TargetsView } from './vscode/targets';
import { registerTasks } from './vscode/tasks';

let ctx: Ctx | undefined;

export function activate(context: vscode.ExtensionContext): void {
  ctx = new Ctx(context);
  const c = ctx;
  context.subscriptions.push(c); // disposed with the extension even if deactivate is not called
  const onAction = (action: NoticeAction, ref: RunRef) => {
    if (action === 'Show Console') void vscode.commands.executeCommand('ascend.openConsole', ref);
    else if (action === 'Show Checkpoints') {
      checkpoints.showRun(ref); // that run first, expanded
      void vscode.commands.executeCommand(`${VIEWS.checkpoints}.focus`);
    }
  };
  const monitor = c.register(new RunMonitor(c, onAction));
  const targets = c.register(new TargetsView(c));
  const runs = c.register(new RunsView(c, monitor));
  const app: App = { ctx: c, targets, runs, monitor };

  c.register(vscode.window.createTreeView(VIEWS.targets, { treeDataProvider: targets, showCollapseAll: true }));
  // several runs can be selected for Compare Runs
  const runsTree = c.register(
    vscode.window.createTreeView(VIEWS.runs, { treeDataProvider: runs, canSelectMany: true }),
  );
  const checkpoints = c.register(new CheckpointsView(app));
  checkpoints.followSelection(runsTree); // the run selected in Runs comes first in Checkpoints
  c.register(vscode.window.createTreeView(VIEWS.checkpoints, { treeDataProvider: checkpoints, canSelectMany: true }));
  registerCommands(app, checkpoints);
  c.register(registerTasks(app));
  c.log.info(`activated; targets: ${c.targets.map((t) => t.id).join(', ')}`);

  // Runs outlive the editor: find them again and stream the live ones.
  void listRuns(app);
}

export function deactivate(): void {
  ctx?.dispose();
  ctx = undefined;
}
