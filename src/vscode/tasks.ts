// A task provider: `{"type": "ascend-finetune", "spec": "flowers.ascend.json", "target": "local"}` in
// tasks.json launches that spec (validated first) and shows its progress in the task's terminal
// until the run ends; the exit code is the run's (0 completed or stopped, 1 failed, 2 bad spec).
// Closing the terminal stops following, not the run (Stop Run stops it).
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { followRun } from '../core/runs/attach';
import { formatCheckpoint, formatEval, formatSummary, formatWarning, ProgressTracker } from '../core/runs/progress';
import { absolutizeSpecPaths } from '../core/spec/builder';
import { parseSpecText } from '../core/spec/file';
import { LOCAL_TARGET_ID } from '../core/targets/model';
import { isKnownEvent } from '../shared/eventsProtocol';
import type { App } from './app';
import { errorText } from './context';
import { launchSpec } from './launch';
import { translate, wording } from './l10n';

export const TASK_TYPE = 'ascend-finetune';
const STEP_LINE_EVERY = 10;

interface AscendTaskDefinition extends vscode.TaskDefinition {
  /** The spec file, relative to the task's workspace folder. */
  spec: string;
  /** `local` (default) or `ssh:<host>`. */
  target?: string;
}

export function registerTasks(app: App): vscode.Disposable {
  return vscode.tasks.registerTaskProvider(TASK_TYPE, {
    provideTasks: () => [],
    resolveTask: (task) => {
      const d = task.definition as AscendTaskDefinition;
      if (typeof d.spec !== 'string' || d.spec === '') return undefined;
      const folder =
        typeof task.scope === 'object' ? task.scope.uri.fsPath : vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
      return new vscode.Task(
        d,
        task.scope ?? vscode.TaskScope.Workspace,
        task.name,
        TASK_TYPE,
        new vscode.CustomExecution(async () => new RunTask(app, d, folder ?? process.cwd())),
      );
    },
  });
}

class RunTask implements vscode.Pseudoterminal {
  private readonly writes = new vscode.EventEmitter<string>();
  private readonly closes = new vscode.EventEmitter<number>();
  readonly onDidWrite = this.writes.event;
  readonly onDidClose = this.closes.event;
  private readonly abort = new AbortController();

  constructor(
    private readonly app: App,
    private readonly d: AscendTaskDefinition,
    private readonly folder: string,
  ) {}

  open(): void {
    this.run().then(
      (code) => this.closes.fire(code),
      (e) => {
        this.line(`error: ${errorText(e)}`);
        this.closes.fire(1);
      },
    );
  }

  handleInput(data: string): void {
    if (data === '\x03') this.close();
  }

  close(): void {
    if (this.abort.signal.aborted) return;
    this.abort.abort();
    this.line(vscode.l10n.t('(stopped following; the run goes on: use "Ascend: Stop Run" to stop it)'));
  }

  private line(text: string): void {
    this.writes.fire(text.replace(/\r?\n/g, '\r\n') + '\r\n');
  }

  private async run(): Promise<number> {
    const file = path.resolve(this.folder, this.d.spec);
    const def = this.app.ctx.target(this.d.target ?? LOCAL_TARGET_ID);
    if (!def) {
      this.line(
        vscode.l10n.t('no target "{0}": use "local" or "ssh:<host>" of the Targets view', String(this.d.target)),
      );
      return 2;
    }
    let raw: unknown;
    try {
      raw = parseSpecText(await readFile(file, 'utf8'), file);
    } catch (e) {
      this.line(`${path.basename(file)}: ${errorText(e)}`);
      return 2;
    }
    const spec = absolutizeSpecPaths(raw, path.dirname(file), path.join) as Record<string, unknown>;
    this.line(`${path.basename(file)} on ${def.label}`);
    const outcome = await launchSpec(this.app, def, spec, (m) => this.line(m));
    if (outcome.kind === 'problems') {
      for (const l of outcome.lines) this.line(`  ${l}`);
      return 2;
    }
    if (outcome.kind !== 'launched') return 1; // no pre-flight question is asked here; kept for the type
    const { record } = outcome;
    this.line(vscode.l10n.t('run {id} in {dir}', { id: record.runId, dir: record.runDir }));
    const tracker = new ProgressTracker();
    for await (const e of followRun({
      runner: this.app.ctx.transport(def),
      runDir: record.runDir,
      signal: this.abort.signal,
    })) {
      tracker.apply(e);
      if (!isKnownEvent(e)) continue;
      if (e.type === 'step' && (e.step % STEP_LINE_EVERY === 0 || e.step === 1)) this.line(tracker.line(translate));
      else if (e.type === 'eval') this.line(formatEval(e, translate));
      else if (e.type === 'checkpoint') this.line(formatCheckpoint(e, translate));
      else if (e.type === 'warning') this.line(formatWarning(e, wording()));
      else if (e.type === 'run_finished') {
        this.line(formatSummary(e, tracker, wording()));
        return e.status === 'failed' ? 1 : 0;
      }
    }
    return 0;
  }
}
