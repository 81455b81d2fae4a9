// "Ascend: Install mindcv on Target": the Targets view's mindcv hint, its context menu, and the
// Start wizard (a mindcv backbone on a target without mindcv) call it. core/targets/mindcvInstall.ts
// does the work; this shows its steps in a cancellable notification, checks the target again, and
// says what doctor found, or names the commands to run by hand.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { installMindcv, type InstallStep } from '../core/targets/mindcvInstall';
import { MindcvInstallError } from '../core/targets/mindcvPlan';
import { LOCAL_TARGET_ID, type TargetDef } from '../core/targets/model';
import { mindcvMissingFor } from '../core/wizard/health';
import type { App } from './app';
import { errorText } from './context';

function stepText(step: InstallStep, label: string): string {
  switch (step) {
    case 'verify':
      return vscode.l10n.t('Checking the wheels the extension carries…');
    case 'probe':
      return vscode.l10n.t("Asking {0}'s Python about itself…", label);
    case 'pyyaml-online':
      return vscode.l10n.t("PyYAML is missing: trying {0}'s own pip…", label);
    case 'pyyaml-download':
      return vscode.l10n.t("Downloading PyYAML for {0}'s Python on this machine…", label);
    case 'copy':
      return vscode.l10n.t('Copying the wheels to {0} (sha256 checked there)…', label);
    case 'install':
      return vscode.l10n.t('Installing mindcv 0.3.0 and tqdm 4.70.1 on {0} (no index)…', label);
  }
}

async function pickTarget(app: App, node: unknown): Promise<TargetDef | undefined> {
  const id = typeof node === 'object' && node !== null ? (node as { targetId?: unknown }).targetId : undefined;
  const given = typeof id === 'string' ? app.ctx.target(id) : undefined;
  if (given) return given;
  const items = app.ctx.targets.map((t) => ({ label: t.label, description: t.description, def: t }));
  return (await vscode.window.showQuickPick(items, { title: vscode.l10n.t('Install mindcv on which target?') }))?.def;
}

/** Installs mindcv on `def`, then runs doctor there again; true when doctor then reports mindcv usable. */
export async function installMindcvOn(app: App, def: TargetDef): Promise<boolean> {
  const log = app.ctx.log;
  const local = app.ctx.target(LOCAL_TARGET_ID)?.local?.python;
  const localPythons = [...new Set([...(local ? [local] : []), 'python3'])];
  try {
    const result = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: vscode.l10n.t('Install mindcv on {0}', def.label),
        cancellable: true,
      },
      (progress, token) => {
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        return installMindcv(def, {
          ...app.ctx.sshFolders(),
          wheelsDir: path.join(app.ctx.extension.extensionUri.fsPath, 'runner', 'wheels'),
          localPythons,
          signal: abort.signal,
          t: vscode.l10n.t,
          onStep: (step) => progress.report({ message: stepText(step, def.label) }),
          onCommand: (argv, code, output) =>
            log.info(`install mindcv on ${def.label}: ${argv.join(' ').slice(0, 300)} -> exit ${code}\n${output}`),
        });
      },
    );
    log.info(`mindcv installed on ${def.label} (PyYAML: ${result.pyyaml}; wheels in ${result.findLinks.join(', ')})`);
  } catch (e) {
    if (e instanceof Error && e.name === 'AbortError') {
      void vscode.window.showInformationMessage(vscode.l10n.t('Install mindcv on {0} was cancelled.', def.label));
      return false;
    }
    const commands = e instanceof MindcvInstallError ? e.commands : [];
    log.error(`install mindcv on ${def.label} failed: ${errorText(e)}\n${commands.join('\n')}`);
    const copy = vscode.l10n.t('Copy Commands');
    const pick = await vscode.window.showErrorMessage(
      vscode.l10n.t('mindcv could not be installed on {0}: {1}', def.label, errorText(e)),
      {
        modal: true,
        detail: commands.length
          ? vscode.l10n.t('To do it by hand, run:\n{0}', commands.join('\n'))
          : vscode.l10n.t('The output channel has the details.'),
      },
      ...(commands.length ? [copy] : []),
    );
    if (pick === copy) await vscode.env.clipboard.writeText(commands.join('\n') + '\n');
    return false;
  }
  // What doctor says now is the verdict, not what pip said.
  await app.targets.check(def);
  const m = (app.targets.doctorOutput(def.id) as { mindcv?: { ok?: unknown; packages?: Record<string, unknown> } })
    ?.mindcv;
  const pk = m?.packages ?? {};
  if (m?.ok === true) {
    void vscode.window.showInformationMessage(
      vscode.l10n.t(
        '{0} now has mindcv {1} (PyYAML {2}, tqdm {3}): mindcv backbones can train there.',
        def.label,
        String(pk.mindcv ?? '?'),
        String(pk.pyyaml ?? '?'),
        String(pk.tqdm ?? '?'),
      ),
    );
    return true;
  }
  void vscode.window.showWarningMessage(
    vscode.l10n.t(
      'pip finished, but Check Target on {0} still reports mindcv as not usable: see the Targets view.',
      def.label,
    ),
  );
  return false;
}

export async function installMindcvCommand(app: App, node: unknown): Promise<void> {
  const def = await pickTarget(app, node);
  if (def) await installMindcvOn(app, def);
}

/**
 * Called by the Start wizard after a backbone is chosen: a mindcv backbone on a target whose last
 * check says mindcv is missing gets the offer (once per choice); the wizard goes on either way.
 */
export async function offerMindcvInstall(app: App, def: TargetDef | undefined, backbone: string): Promise<void> {
  if (!def || !mindcvMissingFor(backbone, app.targets.doctorOutput(def.id))) return;
  const install = vscode.l10n.t('Install mindcv on Target');
  const pick = await vscode.window.showWarningMessage(
    vscode.l10n.t(
      '{0} is a mindcv backbone, and {1} does not have mindcv 0.3.0 (with PyYAML and tqdm) yet.',
      backbone,
      def.label,
    ),
    {
      modal: true,
      detail: vscode.l10n.t(
        'The extension carries the wheels and copies them over the SSH connection: no internet is needed on the target. Without them the run fails at its start.',
      ),
    },
    install,
  );
  if (pick === install) await installMindcvOn(app, def);
}
