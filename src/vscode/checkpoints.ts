// The Checkpoints view: empty until the checkpoint explorer issue fills it, so VS Code shows its
// welcome content (package.json `viewsWelcome`).
import type * as vscode from 'vscode';

export class CheckpointsView implements vscode.TreeDataProvider<never> {
  getChildren(): never[] {
    return [];
  }

  getTreeItem(node: never): vscode.TreeItem {
    return node;
  }
}
