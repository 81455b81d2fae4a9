// The Targets view: "This machine" and SSH hosts; Check Target runs the runner's `doctor` there
// and shows what it found (Python, MindSpore, CANN, each NPU) as children, problems with their fix.
import * as vscode from 'vscode';
import { RunnerError, runnerArgs, runRunner } from '../core/targets/runnerCli';
import { doctorFailureRow, doctorRows, type DoctorRow, type TargetDef } from '../core/targets/model';
import { fixCommand, healthOf, type Health } from '../core/wizard/health';
import type { CommandId } from '../shared/commands';
import { errorText, type Ctx } from './context';
import { translate } from './l10n';

export type TargetsNode =
  | { kind: 'target'; targetId: string }
  | { kind: 'row'; targetId: string; row: DoctorRow; index: number }
  | { kind: 'fix'; targetId: string; fix: string; index: number };

/** `n` counts checks: a new result gets a new tree id, so VS Code shows it expanded (it keeps an old id's collapse state). */
type Check =
  | { state: 'checking'; n: number }
  | { state: 'done'; n: number; rows: DoctorRow[]; output?: unknown; failed?: boolean };

const DOCTOR_TIMEOUT_MS = 180_000;

export class TargetsView implements vscode.TreeDataProvider<TargetsNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<TargetsNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly checks = new Map<string, Check>();
  private readonly pending = new Map<string, Promise<unknown>>();
  private readonly subscription: vscode.Disposable;

  constructor(private readonly ctx: Ctx) {
    this.subscription = ctx.onDidChangeTargets(() => this.refresh());
  }

  refresh(): void {
    this.changed.fire(undefined);
  }

  getChildren(node?: TargetsNode): TargetsNode[] {
    if (!node) return this.ctx.targets.map((t) => ({ kind: 'target', targetId: t.id }));
    if (node.kind === 'target') {
      const check = this.checks.get(node.targetId);
      return check?.state === 'done'
        ? check.rows.map((row, index) => ({ kind: 'row', targetId: node.targetId, row, index }))
        : [];
    }
    if (node.kind === 'row' && (node.row.problem || node.row.suggest) && node.row.fix)
      return [{ kind: 'fix', targetId: node.targetId, fix: node.row.fix, index: node.index }];
    return [];
  }

  getTreeItem(node: TargetsNode): vscode.TreeItem {
    if (node.kind === 'target') {
      const def = this.ctx.target(node.targetId);
      const check = this.checks.get(node.targetId);
      const state =
        check === undefined ? vscode.TreeItemCollapsibleState.None : vscode.TreeItemCollapsibleState.Expanded;
      const item = new vscode.TreeItem(def?.label ?? node.targetId, state);
      item.id = `target/${node.targetId}#${check?.n ?? 0}`;
      item.description =
        check?.state === 'checking' ? vscode.l10n.t('{0} · checking…', def?.description ?? '') : def?.description;
      const problems = check?.state === 'done' && check.rows.some((r) => r.problem);
      item.iconPath = new vscode.ThemeIcon(
        check?.state === 'checking' ? 'loading~spin' : def?.kind === 'ssh' ? 'remote' : 'vm',
        problems ? new vscode.ThemeColor('problemsErrorIcon.foreground') : undefined,
      );
      item.tooltip = def ? targetTooltip(def) : undefined;
      item.contextValue =
        def?.kind === 'local'
          ? 'target.local'
          : def?.source === 'settings'
            ? 'target.ssh.settings'
            : 'target.ssh.config';
      return item;
    }
    if (node.kind === 'row') {
      const item = new vscode.TreeItem(
        node.row.label,
        (node.row.problem || node.row.suggest) && node.row.fix
          ? vscode.TreeItemCollapsibleState.Expanded
          : vscode.TreeItemCollapsibleState.None,
      );
      item.id = `target/${node.targetId}#${this.checks.get(node.targetId)?.n ?? 0}/row/${node.index}`;
      item.description = node.row.description;
      item.tooltip = node.row.fix
        ? vscode.l10n.t('{0}\nFix: {1}', node.row.description, node.row.fix)
        : node.row.description;
      // an NPU another job is using: a warning-coloured chip icon, not an error (it is not broken)
      item.iconPath =
        node.row.busy && !node.row.problem
          ? new vscode.ThemeIcon('circuit-board', new vscode.ThemeColor('problemsWarningIcon.foreground'))
          : new vscode.ThemeIcon(
              node.row.problem ? 'error' : node.row.fix ? 'warning' : 'pass',
              new vscode.ThemeColor(
                node.row.problem
                  ? 'problemsErrorIcon.foreground'
                  : node.row.fix
                    ? 'problemsWarningIcon.foreground'
                    : 'testing.iconPassed',
              ),
            );
      item.contextValue = node.row.problem ? 'doctorRow.problem' : 'doctorRow';
      return item;
    }
    const item = new vscode.TreeItem(node.fix, vscode.TreeItemCollapsibleState.None);
    item.id = `target/${node.targetId}#${this.checks.get(node.targetId)?.n ?? 0}/fix/${node.index}`;
    item.iconPath = new vscode.ThemeIcon('lightbulb');
    item.tooltip = node.fix;
    // Every hint does what it says when clicked (src/core/wizard/health.ts fixCommand).
    const def = this.ctx.target(node.targetId);
    const row = this.rowOf(node.targetId, node.index);
    if (def && row) {
      const fix = fixCommand(row, def.kind, def.id, translate);
      item.command = { title: fix.title, command: fix.command, arguments: fix.args };
      item.tooltip = vscode.l10n.t('{0}\nClick: {1}', node.fix, fix.title);
    }
    return item;
  }

  getParent(node: TargetsNode): TargetsNode | undefined {
    return node.kind === 'target' ? undefined : { kind: 'target', targetId: node.targetId };
  }

  private rowOf(targetId: string, index: number): DoctorRow | undefined {
    const c = this.checks.get(targetId);
    return c?.state === 'done' ? c.rows[index] : undefined;
  }

  /** What the last check says about the target (undefined: not checked, or being checked). */
  health(def: TargetDef): Health | undefined {
    const c = this.checks.get(def.id);
    if (c?.state !== 'done') return undefined;
    return healthOf(c.output, c.failed ? c.rows[0] : undefined, def.local?.python ?? def.ssh?.runner.python, translate);
  }

  /** `doctor`'s last output for a target, if it was checked. */
  doctorOutput(targetId: string): unknown {
    const c = this.checks.get(targetId);
    return c?.state === 'done' ? c.output : undefined;
  }

  /** Runs `doctor` on the target (once at a time per target) and shows the result. */
  check(def: TargetDef): Promise<unknown> {
    const running = this.pending.get(def.id);
    if (running) return running;
    const n = (this.checks.get(def.id)?.n ?? 0) + 1;
    this.checks.set(def.id, { state: 'checking', n });
    this.refresh();
    const p = (async () => {
      try {
        await this.ctx.ensureRunner(def);
        const output = await runRunner(this.ctx.transport(def), runnerArgs.doctor(), { timeoutMs: DOCTOR_TIMEOUT_MS });
        this.checks.set(def.id, { state: 'done', n, rows: doctorRows(output, translate), output });
        this.ctx.log.info(`doctor on ${def.label}: ${JSON.stringify(output)}`);
        this.setContexts(def);
        return output;
      } catch (e) {
        const err = e instanceof RunnerError ? e : { message: errorText(e), exitCode: null, stderrTail: '' };
        this.ctx.log.error(`doctor on ${def.label} failed: ${err.message}\n${err.stderrTail}`);
        const row = doctorFailureRow(def, err, translate);
        this.checks.set(def.id, { state: 'done', n, rows: [row], failed: true });
        this.setContexts(def);
        if (def.kind === 'ssh' && row.label === 'SSH') {
          // A password, one-time code or host key: batch mode cannot answer, a terminal can.
          void vscode.window
            .showWarningMessage(`${def.label}: ${row.description}`, vscode.l10n.t('Log In'))
            .then((a) => {
              if (a) void vscode.commands.executeCommand('ascend.sshLogin' satisfies CommandId, { targetId: def.id });
            });
        }
        return undefined;
      } finally {
        this.pending.delete(def.id);
        this.refresh();
      }
    })();
    this.pending.set(def.id, p);
    return p;
  }

  /** Context keys for the walkthrough: a target was checked, and this machine can train. */
  private setContexts(def: TargetDef): void {
    void vscode.commands.executeCommand('setContext', 'ascend.targetChecked', true);
    if (def.kind === 'local')
      void vscode.commands.executeCommand('setContext', 'ascend.pythonReady', this.health(def)?.ok === true);
  }

  dispose(): void {
    this.subscription.dispose();
    this.changed.dispose();
  }
}

function targetTooltip(def: TargetDef): string {
  if (def.kind === 'local')
    return `This machine (${def.description})\nPython: ${def.local?.python}\nRuns: ${def.runsRoot}`;
  const r = def.ssh?.runner;
  return [
    `ssh ${def.label} (${def.description})`,
    `Python: ${r?.python}`,
    r?.setup?.length ? `Set-up: ${r.setup.join('; ')}` : '',
    `Runs: ${def.runsRoot}`,
  ]
    .filter(Boolean)
    .join('\n');
}
