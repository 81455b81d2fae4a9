// Every command the extension contributes, in one list: the ids become a type, so a typo in a
// registration or an executeCommand call fails to compile, and a unit test holds package.json's
// `contributes.commands` to this list (ids, titles, icons).

export const COMMANDS = [
  { id: 'ascend.startFineTune', title: 'Start Ascend fine-tune', icon: '$(rocket)' },
  { id: 'ascend.startFromSpec', title: 'Start Ascend Fine-Tune from Spec File', icon: '$(rocket)' },
  { id: 'ascend.stopRun', title: 'Stop Run', icon: '$(debug-stop)' },
  { id: 'ascend.saveCheckpoint', title: 'Save Checkpoint Now', icon: '$(save)' },
  { id: 'ascend.openConsole', title: 'Open Console', icon: '$(terminal)' },
  { id: 'ascend.openDashboard', title: 'Open Dashboard', icon: '$(graph-line)' },
  { id: 'ascend.compareRuns', title: 'Compare Runs', icon: '$(graph)' },
  // The Runs Table webview (src/vscode/runsTable/): every run of a target, or of all, with results and spec fields.
  { id: 'ascend.openRunsTable', title: 'Open Runs Table', icon: '$(table)' },
  { id: 'ascend.reattach', title: 'Reattach', icon: '$(plug)' },
  { id: 'ascend.deleteRun', title: 'Delete Run', icon: '$(trash)' },
  // A run's meta (name, notes, tags) through the runner's `meta` command.
  { id: 'ascend.renameRun', title: 'Rename Run…', icon: '$(edit)' },
  { id: 'ascend.editRunNotes', title: 'Edit Run Notes…', icon: '$(note)' },
  { id: 'ascend.tagRun', title: 'Tag Run…', icon: '$(tag)' },
  { id: 'ascend.refresh', title: 'Refresh', icon: '$(refresh)' },
  { id: 'ascend.checkTarget', title: 'Check Target', icon: '$(pulse)' },
  { id: 'ascend.addSshTarget', title: 'Add SSH Target', icon: '$(add)' },
  { id: 'ascend.removeTarget', title: 'Remove Target', icon: '$(remove)' },
  { id: 'ascend.sshLogin', title: 'Log In to SSH Target', icon: '$(key)' },
  { id: 'ascend.showLog', title: 'Show Log', icon: '$(output)' },
  // The air-gapped copy of pretrained weights (src/vscode/copyWeights.ts).
  { id: 'ascend.copyWeightsToTarget', title: 'Copy Weights to Target…', icon: '$(cloud-upload)' },
  // mindcv's carried wheels onto a target (src/vscode/installMindcv.ts).
  { id: 'ascend.installMindcv', title: 'Install mindcv on Target', icon: '$(package)' },
  // Health (src/vscode/wizard/health.ts): the wizard's first screen and the Targets view's hint rows.
  { id: 'ascend.setPythonPath', title: 'Set Python Path…', icon: '$(file-directory)' },
  { id: 'ascend.createPythonEnv', title: 'Create Python Environment with MindSpore', icon: '$(terminal)' },
  { id: 'ascend.openTargetSettings', title: 'Open Target Settings', icon: '$(gear)' },
  // Run-spec files (src/vscode/specLanguage.ts): the language server's lenses and New Run Spec.
  { id: 'ascend.newRunSpec', title: 'New Run Spec', icon: '$(new-file)' },
  { id: 'ascend.startSpecFile', title: 'Start Fine-Tune from This Spec', icon: '$(rocket)' },
  { id: 'ascend.openLastRun', title: 'Open Last Run of This Spec', icon: '$(history)' },
  // The Checkpoints view and the checkpoint explorer (src/vscode/checkpoints/commands.ts).
  { id: 'ascend.checkpoints.refresh', title: 'Refresh Checkpoints', icon: '$(refresh)' },
  { id: 'ascend.checkpoints.openExplorer', title: 'Open Checkpoint Explorer', icon: '$(table)' },
  { id: 'ascend.checkpoint.evaluate', title: 'Evaluate Checkpoint', icon: '$(beaker)' },
  { id: 'ascend.checkpoint.exportMindir', title: 'Export Checkpoint to MindIR', icon: '$(package)' },
  { id: 'ascend.checkpoint.exportOnnx', title: 'Export Checkpoint to ONNX', icon: '$(package)' },
  { id: 'ascend.checkpoint.resume', title: 'Resume Run from Checkpoint', icon: '$(debug-continue)' },
  { id: 'ascend.checkpoint.fineTuneFrom', title: 'Fine-tune from Checkpoint', icon: '$(rocket)' },
  { id: 'ascend.checkpoint.compare', title: 'Compare Checkpoints', icon: '$(diff)' },
  { id: 'ascend.checkpoint.download', title: 'Download Checkpoint', icon: '$(cloud-download)' },
  { id: 'ascend.checkpoint.reveal', title: 'Reveal Checkpoint', icon: '$(folder-opened)' },
  { id: 'ascend.checkpoint.copyPath', title: 'Copy Checkpoint Path', icon: '$(copy)' },
  { id: 'ascend.checkpoint.delete', title: 'Delete Checkpoint', icon: '$(trash)' },
  { id: 'ascend.checkpoints.prune', title: 'Prune Checkpoints (Keep Best + Newest N)', icon: '$(filter)' },
  // See the data and what a checkpoint makes of an image (src/vscode/preview/).
  { id: 'ascend.previewData', title: 'Preview Data', icon: '$(eye)' },
  { id: 'ascend.checkpoint.classify', title: 'Classify with Checkpoint…', icon: '$(symbol-class)' },
  // Sweeps (src/vscode/sweeps/commands.ts): Optuna over a run spec's fields, trials beneath the sweep in Runs.
  { id: 'ascend.startSweep', title: 'Start Sweep…', icon: '$(beaker)' },
  { id: 'ascend.startSweepFromRun', title: 'Start Sweep from This Run…', icon: '$(beaker)' },
  { id: 'ascend.openSweep', title: 'Open Sweep', icon: '$(graph-scatter)' },
  { id: 'ascend.stopSweep', title: 'Stop Sweep', icon: '$(debug-stop)' },
  { id: 'ascend.sweep.fineTuneFromBest', title: 'Fine-tune from the Best Trial', icon: '$(rocket)' },
] as const;

export type CommandId = (typeof COMMANDS)[number]['id'];

/** The category every command shows under in the palette. */
export const COMMAND_CATEGORY = 'Ascend';

/** View ids, also used in package.json. */
export const VIEWS = {
  container: 'ascend',
  targets: 'ascend.targets',
  runs: 'ascend.runs',
  checkpoints: 'ascend.checkpoints',
} as const;
