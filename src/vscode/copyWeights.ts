// "Ascend: Copy Weights to Target…": for an SSH target without internet. The weights come from a
// local file, or from a `mindcv:`/`hf-hub:` source that this machine's runner downloads into its own
// cache (`fetch-weights`); core/targets/weightsCopy.ts copies the file into the target's weights
// cache over the existing ssh connection. Then the open spec's model.pretrained can be pointed at it.
import * as os from 'node:os';
import * as vscode from 'vscode';
import { isNamedWeights, withPretrained } from '../core/spec/weightSources';
import { LOCAL_TARGET_ID, type TargetDef } from '../core/targets/model';
import { runRunner } from '../core/targets/runnerCli';
import {
  copyWeightsWithConfig,
  localCacheWeights,
  weightsRelPath,
  type CopyWithConfigResult,
} from '../core/targets/weightsCopy';
import type { App } from './app';
import { LANGUAGE_ID, weightsChanged } from './specLanguage';

interface Fetched {
  path: string;
  sha256: string;
  cached: boolean;
}

async function pickSshTarget(app: App, node: unknown): Promise<TargetDef | undefined> {
  const id = typeof node === 'object' && node !== null ? (node as { targetId?: unknown }).targetId : undefined;
  const given = typeof id === 'string' ? app.ctx.target(id) : undefined;
  if (given?.kind === 'ssh') return given;
  const items = app.ctx.targets
    .filter((t) => t.kind === 'ssh')
    .map((t) => ({ label: t.label, description: t.description, def: t }));
  if (items.length === 0) {
    void vscode.window.showInformationMessage(
      vscode.l10n.t('Add an SSH target first: weights are copied to SSH targets.'),
    );
    return undefined;
  }
  return (await vscode.window.showQuickPick(items, { title: vscode.l10n.t('Copy weights to which SSH target?') }))?.def;
}

/** A local file and the value model.pretrained should get on the target (undefined: the remote path). */
async function pickWeights(app: App): Promise<{ file: string; pretrained?: string } | undefined> {
  const file = { label: vscode.l10n.t('$(file) A weights file on this machine…'), choice: 'file' as const };
  const named = { label: vscode.l10n.t('$(cloud-download) A mindcv: or hf-hub: source…'), choice: 'named' as const };
  const choice = await vscode.window.showQuickPick([file, named], { title: vscode.l10n.t('Copy Weights to Target') });
  if (!choice) return undefined;
  if (choice.choice === 'file') {
    const uri = (
      await vscode.window.showOpenDialog({
        title: vscode.l10n.t('Weights to copy'),
        filters: { Weights: ['ckpt', 'safetensors', 'pth', 'pt', 'bin'] },
      })
    )?.[0];
    return uri ? { file: uri.fsPath } : undefined;
  }
  const source = await vscode.window.showInputBox({
    title: vscode.l10n.t('Copy Weights to Target'),
    prompt: vscode.l10n.t('Downloaded here, then copied: mindcv:<model> or hf-hub:<org>/<repo>[:<file>]'),
    placeHolder: vscode.l10n.t('mindcv:resnet50'),
    validateInput: (v) => (isNamedWeights(v.trim()) ? undefined : vscode.l10n.t('starts with mindcv: or hf-hub:')),
  });
  if (!source) return undefined;
  const got = await downloadHere(app, source.trim());
  // The target's cache gets it at the same place, so the source name itself works there.
  return { file: got.path, pretrained: source.trim() };
}

/** This machine's runner downloads a named source into this machine's cache, with a notification. */
export async function downloadHere(app: App, source: string): Promise<Fetched> {
  const local = app.ctx.target(LOCAL_TARGET_ID);
  if (!local) throw new Error(vscode.l10n.t('this machine is not a target: set its Python first'));
  await app.ctx.ensureRunner(local);
  return vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: vscode.l10n.t('Downloading {0} on this machine…', source),
    },
    () => runRunner<Fetched>(app.ctx.transport(local), ['fetch-weights', '--', source]),
  );
}

/** Copies a local weights file (and a hub weight's config.json) into the SSH target's weights cache, with a notification. */
export async function copyToTarget(app: App, def: TargetDef, file: string): Promise<CopyWithConfigResult> {
  const rel = weightsRelPath(file, localCacheWeights(process.env, os.homedir()));
  await app.ctx.ensureRunner(def);
  const result = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Copying weights to {0}', def.label) },
    (progress) => {
      let last = 0;
      return copyWeightsWithConfig(def, file, rel, {
        ...app.ctx.sshFolders(),
        onProgress: (sent, total) => {
          if (total > 0) progress.report({ increment: ((sent - last) / total) * 100 });
          last = sent;
        },
      });
    },
  );
  weightsChanged(app, def.id);
  if (typeof result.config === 'object')
    app.ctx.log.info(
      `preprocessing config copied to ${def.label}: ${result.config.remotePath} (${result.config.outcome})`,
    );
  if (result.config === 'missing')
    void vscode.window.showWarningMessage(
      vscode.l10n.t(
        'This machine has no config.json for these hub weights, so {0} cannot use their own preprocessing: its run falls back to the timm preset. Fetch the weights here again (Copy Weights to Target with the hf-hub: name) to bring it.',
        def.label,
      ),
    );
  return result;
}

export async function copyWeightsCommand(app: App, node: unknown): Promise<void> {
  const def = await pickSshTarget(app, node);
  if (!def) return;
  const weights = await pickWeights(app);
  if (!weights) return;
  const result = await copyToTarget(app, def, weights.file);
  const value = weights.pretrained ?? result.remotePath;
  app.ctx.log.info(`weights copied to ${def.label}: ${result.remotePath} (sha256 ${result.sha256}, ${result.outcome})`);
  const editor = vscode.window.activeTextEditor;
  const spec = editor?.document.languageId === LANGUAGE_ID ? editor : undefined;
  const set = spec ? vscode.l10n.t('Set model.pretrained') : undefined;
  // Whole sentences per outcome: a translated sentence cannot take an English fragment.
  const pick = await vscode.window.showInformationMessage(
    result.outcome === 'current'
      ? vscode.l10n.t(
          'The weights were already on {0}: {1} (sha256 checked). model.pretrained: {2}',
          def.label,
          result.remotePath,
          value,
        )
      : vscode.l10n.t(
          'Weights copied to {0}: {1} (sha256 checked). model.pretrained: {2}',
          def.label,
          result.remotePath,
          value,
        ),
    ...(set ? [set] : []),
    vscode.l10n.t('Copy Value'),
  );
  if (pick === vscode.l10n.t('Copy Value')) await vscode.env.clipboard.writeText(value);
  if (pick === set && spec) {
    const text = withPretrained(spec.document.getText(), value);
    if (text === undefined) {
      await vscode.env.clipboard.writeText(value);
      void vscode.window.showInformationMessage(
        vscode.l10n.t('Not a JSON spec: the value is on the clipboard ({0}).', value),
      );
      return;
    }
    const all = new vscode.Range(spec.document.positionAt(0), spec.document.positionAt(spec.document.getText().length));
    await spec.edit((b) => b.replace(all, text));
  }
}
