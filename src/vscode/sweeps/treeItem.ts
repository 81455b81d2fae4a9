// A sweep's parent row in the Runs view: its name, state, trials done and best value; a click
// opens its Sweep panel.
import * as vscode from 'vscode';
import { sweepDescription, type SweepGroup } from '../../core/sweeps/grouping';
import { stateIcon, stateWord } from '../../core/runs/presentation';

export interface SweepRef {
  targetId: string;
  sweepId: string;
}

export function sweepTreeItem(ref: SweepRef, g: SweepGroup): vscode.TreeItem {
  const item = new vscode.TreeItem(g.sweep?.name ?? ref.sweepId, vscode.TreeItemCollapsibleState.Expanded);
  item.id = `sweep/${ref.targetId}\u0000${ref.sweepId}`;
  item.description = vscode.l10n.t('sweep · {0}', sweepDescription(g, vscode.l10n.t));
  // The state's glyph (spinning while it runs), as a run's; a beaker before sweep-ls has listed it.
  const icon = g.sweep ? stateIcon(g.sweep.state) : { id: 'beaker' };
  item.iconPath = new vscode.ThemeIcon(icon.id, icon.color ? new vscode.ThemeColor(icon.color) : undefined);
  item.tooltip = [
    vscode.l10n.t('Sweep {0}', g.sweep?.name ?? ref.sweepId),
    ref.sweepId,
    g.sweep
      ? vscode.l10n.t(
          '{0} · objective {1} ({2})',
          stateWord(g.sweep.state, vscode.l10n.t),
          g.sweep.objective.metric,
          g.sweep.objective.direction === 'maximize' ? vscode.l10n.t('maximize') : vscode.l10n.t('minimize'),
        )
      : '',
    g.sweep?.sweep_dir ?? '',
  ]
    .filter(Boolean)
    .join('\n');
  item.contextValue = g.sweep?.state === 'running' ? 'sweep.live' : g.sweep ? 'sweep.done' : 'sweep.unknown';
  if (g.sweep) item.command = { command: 'ascend.openSweep', title: vscode.l10n.t('Open Sweep'), arguments: [ref] };
  return item;
}
