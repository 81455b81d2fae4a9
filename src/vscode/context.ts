// The one owner of the extension's lifetime: settings, targets, the run index, the log, and every
// disposable. Views and commands get this object (commands are factories `(app) => handler`).
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { deployDir, deployRunner, runnerFiles } from '../core/targets/deploy';
import { RunIndex } from '../core/runs/runIndex';
import type { Target } from '../core/targets/target';
import type { PythonTargetFactory } from '../core/targets/ops';
import { makeTarget, type TargetDef } from '../core/targets/model';
import { loadTargets, readSettings, SECTION, type Settings } from './settings';
import { RunnerError } from '../core/targets/runnerCli';
import { runnerErrorText, wordedRunnerError } from '../core/runs/runnerErrors';
import { wording } from './l10n';
import { wordedErrorText } from '../core/l10n';

export class Ctx implements vscode.Disposable {
  readonly log: vscode.LogOutputChannel;
  readonly index: RunIndex;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly targetsChanged = new vscode.EventEmitter<void>();
  /** Fires when settings or ~/.ssh/config give a new list of targets. */
  readonly onDidChangeTargets = this.targetsChanged.event;
  private current: { settings: Settings; targets: TargetDef[] };
  /** Runner copies checked (and made) this session, per SSH target. */
  private readonly deployed = new Map<string, Promise<void>>();

  constructor(readonly extension: vscode.ExtensionContext) {
    this.log = this.register(vscode.window.createOutputChannel('Ascend Fine-Tune', { log: true }));
    this.index = new RunIndex(extension.globalState);
    this.register(this.targetsChanged);
    this.current = this.load();
    this.register(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration(SECTION)) this.reloadTargets();
      }),
    );
  }

  register<T extends vscode.Disposable>(d: T): T {
    this.disposables.push(d);
    return d;
  }

  get settings(): Settings {
    return this.current.settings;
  }

  get targets(): readonly TargetDef[] {
    return this.current.targets;
  }

  target(id: string): TargetDef | undefined {
    return this.current.targets.find((t) => t.id === id);
  }

  /** Re-reads settings and ~/.ssh/config. */
  reloadTargets(): void {
    this.current = this.load();
    this.deployed.clear();
    this.log.info(`targets: ${this.current.targets.map((t) => t.id).join(', ')}`);
    this.targetsChanged.fire();
  }

  /** The extension's version: the runner copy on SSH hosts is kept per version. */
  get version(): string {
    const v = (this.extension.extension?.packageJSON as { version?: unknown } | undefined)?.version;
    return typeof v === 'string' ? v : '0.0.0';
  }

  /**
   * Makes sure an SSH target that uses the extension's runner has this version's copy (once per
   * session and target; a failure is retried on the next call). Nothing to do for the others.
   */
  ensureRunner(def: TargetDef): Promise<void> {
    if (deployDir(def) === undefined) return Promise.resolve();
    let p = this.deployed.get(def.id);
    if (!p) {
      p = (async () => {
        const files = runnerFiles(path.join(this.extension.extensionUri.fsPath, 'runner'));
        const result = await vscode.window.withProgress(
          {
            location: vscode.ProgressLocation.Notification,
            title: vscode.l10n.t('Ascend: runner {0} on {1}…', this.version, def.label),
          },
          () => deployRunner(def, files, { ...this.sshFolders(), timeoutMs: 180_000 }),
        );
        this.log.info(`runner on ${def.label} (${deployDir(def)}): ${result}`);
      })();
      p.catch(() => this.deployed.delete(def.id));
      this.deployed.set(def.id, p);
    }
    return p;
  }

  /** The runner on a target (argv only; ssh quotes once). */
  transport(def: TargetDef): Target {
    return makeTarget(def, this.sshFolders());
  }

  /** The target's Python running a helper program (`python -c`), for targetOps. */
  python(def: TargetDef): PythonTargetFactory {
    return (launcher) => makeTarget(def, { ...this.sshFolders(), launcher });
  }

  /** Private folders for ssh's shared-connection sockets: the extension's storage, or a short one in /tmp. */
  sshFolders(): { controlDir: string; shortControlDir: string } {
    const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
    return {
      controlDir: path.join(this.extension.globalStorageUri.fsPath, 'ssh'),
      shortControlDir: path.join(os.tmpdir(), `aft-ssh-${uid}`),
    };
  }

  dispose(): void {
    for (const d of this.disposables.splice(0).reverse()) {
      try {
        d.dispose();
      } catch (e) {
        console.error(e);
      }
    }
  }

  private load(): { settings: Settings; targets: TargetDef[] } {
    const settings = readSettings();
    return { settings, targets: loadTargets(this.extension.extensionUri.fsPath, this.version, settings) };
  }
}

/** An error as one line for a message: a runner's error (known code) or core's WordedError in the user's language. */
export function errorText(e: unknown): string {
  if (e instanceof RunnerError && e.info) {
    const worded = wordedRunnerError(e.info, wording());
    if (worded) return worded.message;
  }
  const worded = wordedErrorText(e, vscode.l10n.t);
  if (worded !== undefined) return worded;
  return e instanceof Error ? e.message : String(e);
}

/** A runner error's fix (worded as errorText words its message), when it gave one. */
export function errorFix(e: unknown): string | undefined {
  if (!(e instanceof RunnerError) || !e.info) return undefined;
  return runnerErrorText(e.info, wording())?.fix;
}
