// The Start wizard's shared parts: browsing a target's folders and files, a pick among a field's
// values, and saving and/or launching the chosen spec (validate first, its problems with their fixes).
import * as path from 'node:path';
import * as vscode from 'vscode';
import { RunnerError } from '../../core/targets/runnerCli';
import { buildSpec, mergeSpec, RECIPE_DEFAULTS, slugOf, type WizardChoices } from '../../core/spec/builder';
import { formatOf, writeSpec } from '../../core/spec/writer';
import { listFolder } from '../../core/targets/ops';
import type { TargetDef } from '../../core/targets/model';
import type { CommandId } from '../../shared/commands';
import type { App } from '../app';
import { errorText } from '../context';
import { askPreflight, launchSpec } from '../launch';
import { BACK, pick, type Back, type StepInfo } from '../quickInput';

export type Action = 'launch' | 'saveAndLaunch' | 'save';
export type StepResult = 'next' | Back | undefined;

/** What a backbone, freeze mode or mixed-precision level means, beside it in the pick list. */
export function describeChoice(v: string): string | undefined {
  switch (v) {
    case 'resnet50':
      return vscode.l10n.t('recipe default');
    case 'backbone':
      return vscode.l10n.t('train only the new head (recipe default)');
    case 'none':
      return vscode.l10n.t('train everything');
    case 'up_to:layer1':
      return vscode.l10n.t('freeze the stem and layer1');
    case 'up_to:layer2':
      return vscode.l10n.t('freeze the stem and layer1-2');
    case 'up_to:layer3':
      return vscode.l10n.t('freeze the stem and layer1-3');
    case 'up_to:layer4':
      return vscode.l10n.t('freeze the stem and layer1-4');
    case 'O2':
      return vscode.l10n.t('fp16 except BatchNorm, dynamic loss scaling (recipe default)');
    case 'O0':
      return vscode.l10n.t('fp32 (fastest on CPU)');
    case 'O1':
      return vscode.l10n.t('fp16 for white-listed ops');
    case 'O3':
      return vscode.l10n.t('everything fp16');
    case 'auto':
      return vscode.l10n.t('O3 on Ascend, O0 on CPU');
  }
  return undefined;
}

export async function choose<T extends string>(
  info: StepInfo,
  values: readonly T[],
  current: T,
  placeholder: string,
  set: (v: T) => void,
): Promise<StepResult> {
  const items = values.map((v) => ({ label: v, description: describeChoice(v) }));
  const r = await pick({ ...info, items, placeholder, active: current });
  if (r === BACK || r === undefined) return r;
  set(r.label as T);
  return 'next';
}

export function targetOf(app: App, s: { targetId?: string }): TargetDef {
  const def = app.ctx.target(s.targetId ?? '');
  if (!def) throw new Error(vscode.l10n.t('the chosen target is not configured any more'));
  return def;
}

/** Where browsing starts: this machine's workspace folder, else the target's home. */
export function browseStart(def: TargetDef): string {
  const ws = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file');
  return def.kind === 'local' && ws ? ws.uri.fsPath : '~';
}

/** A folder (or, in `file` mode, a checkpoint file) picked by browsing the target's file system. */
export async function browse(
  app: App,
  def: TargetDef,
  info: StepInfo,
  start: string,
  mode: 'folder' | 'file',
): Promise<string | Back | undefined> {
  const join = def.kind === 'local' ? path.join : path.posix.join;
  type Item = vscode.QuickPickItem & { go?: string; use?: string; preview?: string };
  let dir = start;
  for (;;) {
    const r = await pick<Item>({
      ...info,
      placeholder:
        mode === 'folder'
          ? vscode.l10n.t(
              'Training data on {0}: an ImageFolder root (one sub-folder per class). Type a path to go there.',
              def.label,
            )
          : vscode.l10n.t('Pretrained checkpoint on {0} (.ckpt, .safetensors). Type a path to go there.', def.label),
      items: async () => {
        try {
          const l = await listFolder(app.ctx.python(def), dir, mode === 'file' ? ['.ckpt', '.safetensors'] : []);
          const items: Item[] = [];
          if (mode === 'folder')
            items.push({ label: vscode.l10n.t('$(check) Use this folder'), description: l.path, use: l.path });
          // Opens the Preview Data panel beside the wizard (counts, problems, samples) and stays here.
          if (mode === 'folder')
            items.push({
              label: vscode.l10n.t('$(eye) Preview…'),
              description: vscode.l10n.t('classes, problems and samples of this folder'),
              preview: l.path,
            });
          if (l.parent !== l.path)
            items.push({ label: vscode.l10n.t('$(arrow-up) ..'), description: l.parent, go: l.parent });
          for (const f of l.files) items.push({ label: vscode.l10n.t('$(file-binary) {0}', f), use: join(l.path, f) });
          for (const d of l.dirs) items.push({ label: vscode.l10n.t('$(folder) {0}', d), go: join(l.path, d) });
          return items;
        } catch (e) {
          app.ctx.log.warn(`listing ${dir} on ${def.label}: ${errorText(e)}`);
          return [
            { label: vscode.l10n.t('$(error) {0}', errorText(e)) },
            { label: vscode.l10n.t('$(home) Home folder'), go: '~' },
          ];
        }
      },
      extraItems: (v) =>
        /^[~/]/.test(v.trim())
          ? [{ label: vscode.l10n.t('$(go-to-file) Go to {0}', v.trim()), go: v.trim(), alwaysShow: true }]
          : [],
    });
    if (r === BACK || r === undefined) return r;
    if (r.use) return r.use;
    if (r.preview) void vscode.commands.executeCommand('ascend.previewData', { targetId: def.id, dir: r.preview });
    if (r.go) dir = r.go;
  }
}

/** Saves and/or launches; 'edit' when validate found problems and the user wants to change the choices. */
export async function execute(
  app: App,
  s: Partial<WizardChoices> & { targetId?: string; action?: Action },
  baseSpec: unknown,
): Promise<'done' | 'edit'> {
  const def = targetOf(app, s);
  const choices: WizardChoices = { ...RECIPE_DEFAULTS, ...s, name: s.name ?? 'run', dataTrain: s.dataTrain ?? '' };
  const built = buildSpec(choices);
  const spec: Record<string, unknown> = baseSpec === undefined ? { ...built } : mergeSpec(baseSpec, built);

  if (s.action === 'save' || s.action === 'saveAndLaunch') {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const uri = await vscode.window.showSaveDialog({
      defaultUri: folder ? vscode.Uri.joinPath(folder, `${slugOf(choices.name)}.ascend.yaml`) : undefined,
      filters: { 'Ascend run spec (YAML, commented)': ['yaml', 'yml'], 'Ascend run spec (JSON)': ['json'] },
      saveLabel: 'Save Run Spec',
      title: vscode.l10n.t('Save the run spec (*.ascend.yaml keeps comments; *.ascend.json also works)'),
    });
    if (!uri) return 'done';
    // The same writer as New Run Spec: YAML with a comment on each field, or plain JSON.
    await vscode.workspace.fs.writeFile(uri, Buffer.from(writeSpec(spec, formatOf(uri.path)), 'utf8'));
    void vscode.window.showTextDocument(uri, { preview: false });
    if (s.action === 'save') return 'done';
  }

  try {
    const outcome = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: vscode.l10n.t('Ascend: {0} on {1}', choices.name, def.label),
        cancellable: false,
      },
      (progress) =>
        launchSpec(app, def, spec, (message) => progress.report({ message }), {
          confirmPreflight: (lines) => askPreflight(lines, true),
        }),
    );
    if (outcome.kind === 'problems') {
      const n = outcome.lines.length;
      const a = await vscode.window.showErrorMessage(
        n === 1 ? vscode.l10n.t('The run spec has 1 problem') : vscode.l10n.t('The run spec has {0} problems', n),
        { modal: true, detail: outcome.lines.join('\n') },
        vscode.l10n.t('Edit Choices'),
      );
      return a === vscode.l10n.t('Edit Choices') ? 'edit' : 'done';
    }
    if (outcome.kind === 'held') return outcome.choice === 'edit' ? 'edit' : 'done';
    const { runId } = outcome.record;
    void vscode.window
      .showInformationMessage(
        vscode.l10n.t('Started Ascend run "{0}" on {1} ({2}).', choices.name, def.label, runId),
        vscode.l10n.t('Open Console'),
      )
      .then((a) => {
        if (a)
          void vscode.commands.executeCommand('ascend.openConsole' satisfies CommandId, { targetId: def.id, runId });
      });
    return 'done';
  } catch (e) {
    app.ctx.log.error(
      `start ${choices.name} on ${def.label}: ${errorText(e)}${e instanceof RunnerError ? `\n${e.stderrTail}` : ''}`,
    );
    const a = await vscode.window.showErrorMessage(
      vscode.l10n.t('Could not start the run on {0}: {1}', def.label, errorText(e)),
      vscode.l10n.t('Show Log'),
      vscode.l10n.t('Check Target'),
    );
    if (a === vscode.l10n.t('Show Log')) app.ctx.log.show();
    if (a === vscode.l10n.t('Check Target')) void app.targets.check(def);
    return 'done';
  }
}
