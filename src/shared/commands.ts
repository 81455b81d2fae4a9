// Every command the extension contributes, in one list: the ids become a type, so a typo in a
// registration or an executeCommand call fails to compile, and a unit test holds package.json's
// `contributes.commands` to this list (ids, titles, icons).

export const COMMANDS = [
  { id: 'ascend.startFineTune', title: 'Start Ascend fine-tune', icon: '$(rocket)' },
  { id: 'ascend.startFromSpec', title: 'Start Ascend Fine-Tune from Spec File', icon: '$(rocket)' },
  { id: 'ascend.stopRun', title: 'Stop Run', icon: '$(debug-stop)' },
  { id: 'ascend.saveCheckpoint', title: 'Save Checkpoint Now', icon: '$(save)' },
  { id: 'ascend.openConsole', title: 'Open Console', icon: '$(terminal)' },
  { id: 'ascend.reattach', title: 'Reattach', icon: '$(plug)' },
  { id: 'ascend.deleteRun', title: 'Delete Run', icon: '$(trash)' },
  { id: 'ascend.refresh', title: 'Refresh', icon: '$(refresh)' },
  { id: 'ascend.checkTarget', title: 'Check Target', icon: '$(pulse)' },
  { id: 'ascend.addSshTarget', title: 'Add SSH Target', icon: '$(add)' },
  { id: 'ascend.removeTarget', title: 'Remove Target', icon: '$(remove)' },
  { id: 'ascend.sshLogin', title: 'Log In to SSH Target', icon: '$(key)' },
  { id: 'ascend.showLog', title: 'Show Log', icon: '$(output)' },
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
