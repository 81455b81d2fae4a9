// Placeholder entry point: the real extension (runs view, dashboard, targets) comes in a later issue.
import * as vscode from 'vscode';

export function activate(context: vscode.ExtensionContext): void {
  context.subscriptions.push(
    vscode.commands.registerCommand('ascend.startFineTune', () =>
      vscode.window.showInformationMessage('Ascend Fine-Tune: coming in the extension issue.'),
    ),
  );
}

export function deactivate(): void {}
