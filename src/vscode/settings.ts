// The `ascendFinetune.*` settings, read into plain values for src/core.
import { existsSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { translate } from './l10n';
import { readSshHosts } from '../core/ssh/config';
import {
  buildTargets,
  expandHome,
  localPython,
  type RemoteDefaults,
  type SshTargetSetting,
  type TargetDef,
} from '../core/targets/model';

export const SECTION = 'ascendFinetune';

export interface Settings {
  pythonPath: string;
  runsRoot: string;
  sshTargets: SshTargetSetting[];
  readSshConfig: boolean;
  remote: RemoteDefaults;
  notifyWarnings: boolean;
}

export function readSettings(): Settings {
  const c = vscode.workspace.getConfiguration(SECTION);
  const sshTargets = c.get<unknown[]>('sshTargets', []);
  return {
    pythonPath: c.get<string>('pythonPath', ''),
    runsRoot: c.get<string>('runsRoot', '~/.ascend-finetune/runs'),
    // The setting's schema asks for objects with a host; anything else is skipped, not trusted.
    sshTargets: (Array.isArray(sshTargets) ? sshTargets : []).filter(
      (t): t is SshTargetSetting =>
        typeof t === 'object' && t !== null && typeof (t as SshTargetSetting).host === 'string',
    ),
    readSshConfig: c.get<boolean>('readSshConfig', true),
    remote: {
      python: c.get<string>('remote.python', 'python3') || 'python3',
      runnerDir: c.get<string>('remote.runnerDir', '') || undefined,
      setup: c.get<string>('remote.setup', '') || undefined,
      runsRoot: c.get<string>('remote.runsRoot', '.ascend-finetune/runs') || '.ascend-finetune/runs',
    },
    notifyWarnings: c.get<boolean>('notifyWarnings', true),
  };
}

/**
 * The targets for these settings: this machine runs the runner shipped in the extension's `runner/`;
 * an SSH host without a runner folder of its own gets a copy of it (deploy.ts).
 */
export function loadTargets(extensionRoot: string, version: string, s: Settings): TargetDef[] {
  const home = os.homedir();
  return buildTargets({
    localRunner: {
      python: localPython(s.pythonPath, extensionRoot, home, existsSync),
      runnerDir: path.join(extensionRoot, 'runner'),
    },
    localRunsRoot: expandHome(s.runsRoot || '~/.ascend-finetune/runs', home),
    hostname: os.hostname(),
    t: translate,
    sshConfigHosts: s.readSshConfig ? readSshHosts(path.join(home, '.ssh', 'config'), { home }) : [],
    sshSettings: s.sshTargets,
    remoteDefaults: { ...s.remote, deployRunnerDir: `.ascend-finetune/runner/${version}` },
  });
}

/** Replaces the user-level list of SSH targets. */
export function saveSshTargets(list: SshTargetSetting[]): Thenable<void> {
  return vscode.workspace.getConfiguration(SECTION).update('sshTargets', list, vscode.ConfigurationTarget.Global);
}
