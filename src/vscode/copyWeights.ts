// "Ascend: Copy Weights to Target…": for an SSH target without internet. The weights come from a
// local file, or from a `mindcv:`/`hf-hub:` source that this machine's runner downloads into its own
// cache (`fetch-weights`); core/targets/weightsCopy.ts copies the file into the target's weights
// cache over the existing ssh connection. Then the open spec's model.pretrained can be pointed at it.
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { isNamedWeights, withPretrained } from '../core/spec/weightSources';
import { LOCAL_TARGET_ID, type TargetDef } from '../core/targets/model';
import { FetchCancelled, fetchWeights, type FetchedWeights } from '../core/targets/weightsCache';
import {
  copyWeightsWithConfig,
  fileStamp,
  localCacheWeights,
  pretrainedValue,
  sha256File,
  weightsRelPath,
  WeightsCopyError,
  type CopyProblem,
  type CopyWithConfigResult,
} from '../core/targets/weightsCopy';
import type { App } from './app';
import { errorText } from './context';
import { LANGUAGE_ID, weightsChanged } from './specLanguage';

/** The user cancelled the download here or the copy; `message` (translated) says what is kept. */
export class CopyCancelled extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CopyCancelled';
  }
}

const mb = (n: number) => (n / 1e6).toFixed(1);

/** A notification's bar and "x of y MB" for byte counts (total null: unknown). */
function byteProgress(progress: vscode.Progress<{ message?: string; increment?: number }>) {
  let shown = 0;
  return (done: number, total: number | null) => {
    if (total === null) return progress.report({ message: vscode.l10n.t('{0} MB', mb(done)) });
    const pct = (100 * done) / Math.max(total, 1);
    progress.report({
      increment: Math.max(pct - shown, 0),
      message: vscode.l10n.t('{0} of {1} MB', mb(done), mb(total)),
    });
    shown = Math.max(pct, shown);
  };
}

/** A copy problem in the user's language: the target's answer is values, worded here. */
export function copyProblemText(p: CopyProblem, target: string): string {
  switch (p.code) {
    case 'cancelled':
      return vscode.l10n.t(
        'Copying weights to {0} was cancelled: the partial copy stays there, and the next copy resumes from it.',
        target,
      );
    case 'incomplete':
      return vscode.l10n.t(
        'the connection to {0} broke off after {1} of {2} MB: the partial copy stays there, and copying again resumes from it',
        target,
        mb(p.part),
        mb(p.size),
      );
    case 'sha256-mismatch':
      return vscode.l10n.t(
        'the sha256 of the file on {0} is {1}, not {2} as here: the copy there was deleted (was the file changed while it was copied?)',
        target,
        p.got,
        p.want,
      );
    case 'too-long':
      return vscode.l10n.t("{0} received more than the file's {1} bytes: the copy there was deleted", target, p.size);
    case 'busy':
      return vscode.l10n.t(
        'another copy (one whose connection broke off), or a download, on {0} is still writing this file: try again in a minute',
        target,
      );
    case 'bad-path':
      return vscode.l10n.t('{0} is not a path inside the weights cache', p.rel);
    case 'unsafe':
      return vscode.l10n.t(
        '{0} on {1} is a symlink that another user (uid {2}) made, so the copy does not follow it and wrote nothing through it: remove it, or set ASCEND_FINETUNE_CACHE on {1} to point the weights cache elsewhere',
        p.path,
        target,
        p.uid,
      );
    case 'changed':
      return vscode.l10n.t(
        '{0} changed on this machine while it was being copied: copy it again once it is complete',
        p.file,
      );
    case 'os-error':
      return vscode.l10n.t('{0} could not write to its weights cache: {1}', target, p.detail);
    case 'ssh-failed':
      return p.exit === null
        ? vscode.l10n.t('ssh to {0} did not run: {1}', target, p.detail)
        : vscode.l10n.t('ssh to {0} ended with exit code {1}: {2}', target, p.exit, p.detail);
  }
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

/** A local file and the value model.pretrained should get on the target (undefined: CopiedWeights.pretrained). */
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

/**
 * This machine's runner downloads a named source into this machine's cache, with a notification
 * that shows the bytes and can be cancelled (the runner keeps its `.part`: CopyCancelled).
 */
export async function downloadHere(app: App, source: string): Promise<FetchedWeights> {
  const local = app.ctx.target(LOCAL_TARGET_ID);
  if (!local) throw new Error(vscode.l10n.t('this machine is not a target: set its Python first'));
  await app.ctx.ensureRunner(local);
  try {
    return await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: vscode.l10n.t('Downloading {0} on this machine…', source),
        cancellable: true,
      },
      (progress, token) => {
        const run = fetchWeights(app.ctx.transport(local), source, byteProgress(progress));
        token.onCancellationRequested(() => run.cancel());
        return run.result;
      },
    );
  } catch (e) {
    if (e instanceof FetchCancelled)
      throw new CopyCancelled(
        vscode.l10n.t(
          'Download of {0} on this machine cancelled: downloading it again resumes the partial file.',
          source,
        ),
      );
    throw e;
  }
}

export interface CopiedWeights extends CopyWithConfigResult {
  /**
   * The value for model.pretrained on the target: a file of this machine's cache is copied to the
   * same place there, so it is the source's name (`mindcv:<model>`, `hf-hub:<org>/<repo>`), which
   * the runner finds in the target's cache and loads with that source's preprocessing; any other file,
   * its path there.
   */
  pretrained: string;
}

/**
 * Copies a local weights file (and a hub weight's config.json) into the SSH target's weights cache,
 * in a notification with its progress that can be cancelled (CopyCancelled: the target keeps the
 * partial file). Failures throw an Error worded in the user's language.
 */
export async function copyToTarget(app: App, def: TargetDef, file: string): Promise<CopiedWeights> {
  await app.ctx.ensureRunner(def);
  const abort = new AbortController();
  let sending = false;
  let rel = '';
  let result: CopyWithConfigResult;
  try {
    result = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: vscode.l10n.t('Copying weights to {0}', def.label),
        cancellable: true,
      },
      async (progress, token) => {
        token.onCancellationRequested(() => abort.abort());
        const stamp = await fileStamp(file);
        const { size } = stamp;
        let hashed = 0;
        let last = 0;
        const sha = await sha256File(
          file,
          (n) => {
            hashed += n;
            if (Date.now() - last < 200 && hashed < size) return;
            last = Date.now();
            progress.report({
              message: vscode.l10n.t('sha256 on this machine: {0} of {1} MB', mb(hashed), mb(size)),
            });
          },
          abort.signal,
        );
        rel = weightsRelPath(file, localCacheWeights(process.env, os.homedir()), sha);
        const bar = byteProgress(progress);
        sending = true;
        return copyWeightsWithConfig(def, file, rel, {
          ...app.ctx.sshFolders(),
          sha256: sha,
          stamp,
          signal: abort.signal,
          onProgress: (done, total) => bar(done, total),
        });
      },
    );
  } catch (e) {
    if (abort.signal.aborted)
      throw new CopyCancelled(
        sending
          ? copyProblemText({ code: 'cancelled' }, def.label)
          : vscode.l10n.t('Copying weights to {0} was cancelled before anything was sent.', def.label),
      );
    if (e instanceof WeightsCopyError) throw new Error(copyProblemText(e.problem, def.label), { cause: e });
    throw e;
  }
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
  return { ...result, pretrained: pretrainedValue(rel, result.remotePath) };
}

export async function copyWeightsCommand(app: App, node: unknown): Promise<void> {
  const def = await pickSshTarget(app, node);
  if (!def) return;
  let weights: Awaited<ReturnType<typeof pickWeights>>;
  try {
    weights = await pickWeights(app);
  } catch (e) {
    if (e instanceof CopyCancelled) return void vscode.window.showInformationMessage(e.message);
    throw e;
  }
  if (!weights) return;
  let result: CopiedWeights;
  try {
    result = await copyToTarget(app, def, weights.file);
  } catch (e) {
    if (e instanceof CopyCancelled) return void vscode.window.showInformationMessage(e.message);
    void vscode.window.showErrorMessage(
      vscode.l10n.t('Could not copy {0} to {1}: {2}', path.basename(weights.file), def.label, errorText(e)),
    );
    return;
  }
  // A file picked from this machine's cache is named by its source too, not by its path there.
  const value = weights.pretrained ?? result.pretrained;
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
        vscode.l10n.t(
          'The spec is not one JSON or YAML mapping, so it was not changed: the value is on the clipboard ({0}).',
          value,
        ),
      );
      return;
    }
    const all = new vscode.Range(spec.document.positionAt(0), spec.document.positionAt(spec.document.getText().length));
    await spec.edit((b) => b.replace(all, text));
  }
}
