// Health before questions: the Start wizard's first screen knows whether the target can train
// (`doctor`, run now if it has not been), and when it cannot, says why in one sentence with what to
// do: Set Python Path… (a file picker, checked by running `doctor` with that Python before it is
// saved), a path typed straight into the screen, or, on this machine, a terminal task that creates
// the Python environment the README describes. The Targets view's hint rows call the same commands.
import { existsSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { RunnerError, runnerArgs, runRunner } from '../../core/targets/runnerCli';
import { doctorFailureRow, expandHome, type TargetDef } from '../../core/targets/model';
import { healthOf, runtimeRequirements, venvTaskArgs, type Health } from '../../core/wizard/health';
import type { CommandId } from '../../shared/commands';
import type { App } from '../app';
import { errorText } from '../context';
import { translate } from '../l10n';
import { SECTION } from '../settings';
import type { StepInfo } from '../quickInput';

const DOCTOR_TIMEOUT_MS = 180_000;
/** Where "Create Python Environment" puts the venv: one per machine, like the setting it fills. */
export const VENV_DIR = path.join(os.homedir(), '.ascend-finetune', 'venv');

/** The target's health, running `doctor` first when it has not been run (or is running). */
export async function targetHealth(app: App, def: TargetDef): Promise<Health | undefined> {
  if (app.targets.health(def) === undefined) await app.targets.check(def);
  return app.targets.health(app.ctx.target(def.id) ?? def);
}

/** `doctor` run with another Python for this machine, without saving anything. */
export async function healthWith(app: App, def: TargetDef, python: string): Promise<Health> {
  const candidate: TargetDef = { ...def, local: { ...def.local!, python: expandHome(python, os.homedir()) } };
  try {
    const output = await runRunner(app.ctx.transport(candidate), runnerArgs.doctor(), { timeoutMs: DOCTOR_TIMEOUT_MS });
    app.ctx.log.info(`doctor with ${python}: ${JSON.stringify(output)}`);
    return healthOf(output, undefined, python, translate);
  } catch (e) {
    const err = e instanceof RunnerError ? e : { message: errorText(e), exitCode: null, stderrTail: '' };
    app.ctx.log.warn(`doctor with ${python} failed: ${err.message}\n${err.stderrTail}`);
    return healthOf(undefined, doctorFailureRow(candidate, err, translate), python, translate);
  }
}

/** Saves `ascendFinetune.pythonPath` (user settings: a path of this machine) and checks this machine again. */
async function savePython(app: App, python: string): Promise<Health | undefined> {
  await vscode.workspace.getConfiguration(SECTION).update('pythonPath', python, vscode.ConfigurationTarget.Global);
  app.ctx.reloadTargets();
  const def = app.ctx.targets.find((t) => t.kind === 'local');
  if (!def) return undefined;
  await app.targets.check(def);
  return app.targets.health(def);
}

/** Checks a Python, then saves it when it can train (or when the user keeps it anyway). */
export async function usePython(app: App, def: TargetDef, python: string): Promise<Health | undefined> {
  const h = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Ascend: checking {0}…', python) },
    () => healthWith(app, def, python),
  );
  if (!h.ok) {
    const a = await vscode.window.showWarningMessage(h.sentence, { modal: true }, vscode.l10n.t('Use It Anyway'));
    if (a !== vscode.l10n.t('Use It Anyway')) return h;
  }
  return savePython(app, python);
}

/** "Set Python Path…": a file picker starting beside the current Python; the choice is checked, then saved. */
export async function setPythonPath(app: App): Promise<Health | undefined> {
  const def = app.ctx.targets.find((t) => t.kind === 'local');
  if (!def?.local) return undefined;
  const current = def.local.python;
  const folder = path.isAbsolute(current)
    ? path.dirname(current)
    : (vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? os.homedir());
  const picked = await vscode.window.showOpenDialog({
    title: vscode.l10n.t('Python with MindSpore for runs on this machine'),
    defaultUri: vscode.Uri.file(folder),
    canSelectFiles: true,
    canSelectFolders: false,
    openLabel: 'Use This Python',
  });
  if (!picked?.[0]) return undefined;
  return usePython(app, def, picked[0].fsPath);
}

/**
 * "Create Python Environment with MindSpore": the README's set-up (a venv, then the runner's
 * requirements: MindSpore 2.10's wheel, which serves CPU and Ascend, Pillow and NumPy) as a task in a
 * terminal the user watches; when it succeeds its Python becomes `ascendFinetune.pythonPath`.
 */
export async function createPythonEnv(app: App): Promise<Health | undefined> {
  const reqFile = vscode.Uri.joinPath(app.ctx.extension.extensionUri, 'runner', 'requirements.txt').fsPath;
  const requirements = existsSync(reqFile)
    ? runtimeRequirements(readFileSync(reqFile, 'utf8'))
    : ['mindspore==2.10.0', 'pillow', 'numpy<2'];
  const task = new vscode.Task(
    { type: 'ascend-finetune-setup' },
    vscode.TaskScope.Global,
    vscode.l10n.t('Create Python environment with MindSpore'),
    'Ascend',
    new vscode.ProcessExecution('/bin/sh', venvTaskArgs(VENV_DIR, requirements)),
  );
  task.presentationOptions = { reveal: vscode.TaskRevealKind.Always, panel: vscode.TaskPanelKind.Dedicated };
  const exit = new Promise<number | undefined>((resolve) => {
    const sub = vscode.tasks.onDidEndTaskProcess((e) => {
      if (e.execution.task.name !== task.name) return;
      sub.dispose();
      resolve(e.exitCode);
    });
  });
  await vscode.tasks.executeTask(task);
  const code = await vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: vscode.l10n.t('Ascend: creating {0} with MindSpore (see the terminal)…', VENV_DIR),
    },
    () => exit,
  );
  if (code !== 0) {
    void vscode.window.showErrorMessage(
      vscode.l10n.t('Creating the Python environment failed (exit {0}): the terminal shows why.', code ?? '?'),
    );
    return undefined;
  }
  const h = await savePython(app, path.join(VENV_DIR, 'bin', 'python'));
  if (h?.ok) void vscode.window.showInformationMessage(vscode.l10n.t('This machine now trains with {0}.', VENV_DIR));
  return h;
}

/** Opens the Settings UI at the setting a target's hint is about. */
export function openTargetSettings(arg: unknown): Thenable<unknown> {
  const setting = (arg as { setting?: unknown } | undefined)?.setting;
  const key = typeof setting === 'string' && /^[A-Za-z.]+$/.test(setting) ? setting : 'pythonPath';
  return vscode.commands.executeCommand('workbench.action.openSettings', `${SECTION}.${key}`);
}

type HealthItem = vscode.QuickPickItem & { act: 'set' | 'create' | 'again' | 'log' | 'login' | 'continue' | 'use' };

/**
 * The wizard's first screen: nothing when the target can train; otherwise the reason and the ways
 * out, until it can (or the user continues anyway, or leaves). 'ok' to go on.
 */
export async function ensureHealthy(app: App, start: TargetDef, info: StepInfo): Promise<'ok' | 'cancel'> {
  for (;;) {
    const def = app.ctx.target(start.id) ?? start;
    // Checked under a progress notification: a quick pick is shown only when there is something to say.
    const h = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: vscode.l10n.t('Ascend: checking {0} (Python, MindSpore, NPUs)…', def.label),
      },
      () => targetHealth(app, def),
    );
    if (h === undefined || h.ok) return 'ok';
    const qp = vscode.window.createQuickPick<HealthItem>();
    qp.ignoreFocusOut = true;
    qp.title = vscode.l10n.t('{0}: {1} cannot train yet', info.title, def.label);
    qp.placeholder = h.sentence;
    const base: HealthItem[] = [{ label: '$(error) ' + h.sentence, act: 'log', alwaysShow: true }];
    if (def.kind === 'local') {
      base.push(
        {
          label: vscode.l10n.t('$(file-directory) Set Python Path…'),
          description: vscode.l10n.t('choose a Python with MindSpore (it is checked before it is saved)'),
          act: 'set',
        },
        {
          label: vscode.l10n.t('$(terminal) Create a Python environment with MindSpore'),
          description: vscode.l10n.t('{0}: a venv with MindSpore 2.10, Pillow and NumPy, in a terminal', VENV_DIR),
          act: 'create',
        },
      );
    } else if (h.problem === 'ssh') {
      base.push({ label: vscode.l10n.t('$(key) Log In to SSH Target'), act: 'login' });
    }
    base.push(
      { label: vscode.l10n.t('$(refresh) Check again'), act: 'again' },
      { label: vscode.l10n.t('$(output) Show Log'), act: 'log' },
      {
        label: vscode.l10n.t('$(arrow-right) Continue anyway'),
        description: vscode.l10n.t('the launch will fail until this is fixed'),
        act: 'continue',
      },
    );
    const typed = (v: string): HealthItem[] =>
      def.kind === 'local' && /^[~/]/.test(v.trim())
        ? [
            {
              label: vscode.l10n.t("$(check) Use {0} as this machine's Python", v.trim()),
              act: 'use',
              alwaysShow: true,
            },
          ]
        : [];
    qp.items = base;
    qp.show();
    const choice = await new Promise<HealthItem | undefined>((resolve) => {
      qp.onDidChangeValue((v) => (qp.items = [...typed(v), ...base]));
      qp.onDidAccept(() => resolve(qp.selectedItems[0] ?? qp.activeItems[0]));
      qp.onDidHide(() => resolve(undefined));
    });
    const value = qp.value.trim();
    qp.dispose();
    if (!choice) return 'cancel';
    switch (choice.act) {
      case 'continue':
        return 'ok';
      case 'set':
        await setPythonPath(app);
        break;
      case 'use':
        await usePython(app, def, value);
        break;
      case 'create':
        await createPythonEnv(app);
        break;
      case 'login':
        await vscode.commands.executeCommand('ascend.sshLogin' satisfies CommandId, { targetId: def.id });
        await app.targets.check(def);
        break;
      case 'again':
        await app.targets.check(def);
        break;
      case 'log':
        app.ctx.log.show();
        break;
    }
  }
}
