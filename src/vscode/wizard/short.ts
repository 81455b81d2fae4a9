// "Start Ascend fine-tune", the short path: target (only when there is more than one), health (only
// when the target cannot train), data folder (the workspace's image folders first, with their
// counts; an SSH target's folder is probed there for the same), pretrained weights (the catalog's
// weights for the backbone, mindcv's then timm's hub repositories, each "cached on" or "downloads on" the target,
// downloaded when picked, or another backbone's, which changes the backbone: ./weights.ts; or a checkpoint,
// browsed or typed, whose run's backbone the run takes; or none: then every layer trains), then
// ONE summary of every setting where any line can be picked to change it, and Launch. With the
// defaults that is at most five interactions from the palette (src/core/wizard/interactions.ts).
// Over 450 lines: one step per function in the order the user meets them; the summary's line
// wording lives in src/core/wizard/summary.ts and the weights items in ./weights.ts already.
// The `auto` parts are resolved for the target and the data before the summary
// (src/core/wizard/defaults.ts); the last choices are remembered per target for the next time;
// "All settings…" opens the full wizard.
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  AMP_LEVELS,
  BACKBONES,
  checkName,
  defaultName,
  freezeModesFor,
  parseNumberField,
  RECIPE_DEFAULTS,
  type FreezeMode,
  type NumberField,
  type WizardChoices,
} from '../../core/spec/builder';
import type { TargetDef } from '../../core/targets/model';
import { npuChoices } from '../../core/targets/model';
import { imageFolderDescription } from '../../core/wizard/imageFolders';
import { recallChoices, rememberChoices, rememberKey } from '../../core/wizard/remember';
import { DataCheckCache, type DataCheck } from '../../core/preview/check';
import { runPreview } from '../../core/preview/client';
import {
  dataCheckLines,
  refitFreeze,
  summaryLines,
  summaryTitle,
  withPretrained,
  type SummaryKey,
} from '../../core/wizard/summary';
import type { App } from '../app';
import { LONG_TIMEOUT_MS } from '../checkpoints/types';
import { startWizard } from '../startWizard';
import { BACK, input, pick, pickMany, type StepInfo } from '../quickInput';
import { browse, browseStart, choose, execute } from './common';
import type { DataFacts } from '../../core/wizard/defaults';
import { offerMindcvInstall } from '../installMindcv';
import { backboneForWeights, type WeightsFacts } from '../../core/wizard/targetData';
import { backboneOfNamed, isNamedWeights } from '../../core/spec/weightSources';
import { afterCatalogPick, catalogItems, isCatalogPick, placeBrowse, type CatalogItem } from './weights';
import { describeData, describeWeights, resolvedFor, workspaceImageFolders } from './data';
import { ensureHealthy } from './health';
import { translate } from '../l10n';

const LAST_TARGET = 'ascend.wizard.lastTarget';
/** The summary's data checks, per target and folder, for the life of the extension host. */
const dataChecks = new DataCheckCache(translate);

interface Short {
  def: TargetDef;
  c: WizardChoices;
  /** Fields the user set (now or last time): resolved defaults leave them alone. */
  userSet: Set<keyof WizardChoices>;
  freezeChosen: boolean;
  /** The freeze mode the user picked (this session or remembered), which weights bring back after None. */
  userFreeze?: FreezeMode;
  /** The chosen data folder's counts and image size, as the target sees it. */
  facts: DataFacts;
  /** What the chosen weights file says it was trained as. */
  weights: WeightsFacts;
}

export async function startShortPath(app: App, start: { targetId?: string } = {}): Promise<void> {
  const title = vscode.l10n.t('Start Ascend fine-tune');
  const info = (step: number, total: number): StepInfo => ({ title, step, totalSteps: total, back: false });
  const targets = app.ctx.targets;
  let def = start.targetId ? app.ctx.target(start.targetId) : undefined;
  const askTarget = !def && targets.length > 1;
  const total = askTarget ? 4 : 3;
  if (!def && !askTarget) def = targets[0];
  if (!def) {
    const last = app.ctx.extension.globalState.get<string>(LAST_TARGET);
    const r = await pick({
      ...info(1, total),
      items: targets.map((t) => ({
        label: t.label,
        description: t.description,
        id: t.id,
        iconPath: new vscode.ThemeIcon(t.kind === 'ssh' ? 'remote' : 'vm'),
      })),
      placeholder: vscode.l10n.t('Where to train'),
      active: app.ctx.target(last ?? '')?.label,
    });
    if (r === BACK || r === undefined) return;
    def = app.ctx.target(r.id);
    if (!def) return;
  }
  const first = askTarget ? 2 : 1;
  if ((await ensureHealthy(app, def, info(first, total))) === 'cancel') return;
  def = app.ctx.target(def.id) ?? def;

  const recalled = recallChoices(app.ctx.extension.workspaceState.get(rememberKey(def.id)));
  const st: Short = {
    def,
    c: { ...RECIPE_DEFAULTS, name: '', dataTrain: '', ...recalled.choices },
    userSet: recalled.userSet,
    freezeChosen: recalled.freezeChosen,
    userFreeze: recalled.freezeChosen ? recalled.choices.freeze : undefined,
    facts: {},
    weights: {},
  };
  const data = await dataStep(app, st, info(first, total));
  if (!data) return;
  st.c.dataTrain = data;
  st.facts = await describeData(app, def, data);
  const weights = await weightsStep(app, st, info(first + 1, total));
  if (weights === undefined) return;
  await useWeights(app, st, weights);
  if (!st.userSet.has('name') || !st.c.name) st.c.name = defaultName(st.c.dataTrain, st.c.backbone);
  resolve(app, st);

  for (;;) {
    const r = await summary(app, st, info(first + 2, total));
    if (r === undefined) return;
    if (r === 'preview') {
      void vscode.commands.executeCommand('ascend.previewData', { targetId: st.def.id, dir: st.c.dataTrain });
      continue;
    }
    if (r === 'all') {
      await startWizard(app, { targetId: st.def.id, choices: { ...st.c } });
      return;
    }
    if (r === 'launch' || r === 'save') {
      await remember(app, st);
      const out = await execute(
        app,
        { ...st.c, targetId: st.def.id, action: r === 'save' ? 'saveAndLaunch' : 'launch' },
        undefined,
      );
      if (out !== 'edit') return;
      continue;
    }
    await edit(app, st, r, info(first + 2, total));
    resolve(app, st);
  }
}

async function remember(app: App, st: Short): Promise<void> {
  await app.ctx.extension.workspaceState.update(
    rememberKey(st.def.id),
    rememberChoices({ ...st.c, freeze: st.userFreeze ?? st.c.freeze }, st.freezeChosen),
  );
  await app.ctx.extension.globalState.update(LAST_TARGET, st.def.id);
}

/**
 * Weights chosen (null: none). A run's own checkpoint says which backbone it was trained as: the run
 * takes that backbone (a resnet18 file cannot load into the recipe's resnet50), unless the user chose one.
 */
async function useWeights(app: App, st: Short, weights: string | null): Promise<void> {
  const before = st.c.freeze;
  st.c = withPretrained(st.c, weights ?? undefined, st.userFreeze);
  if (!weights && before !== 'none' && st.userFreeze === before)
    void vscode.window.showInformationMessage(
      vscode.l10n.t(
        'No pretrained weights: freeze is now none (frozen random layers would train the head on random features). Pick weights to get {0} back.',
        before,
      ),
    );
  // A catalog name (mindcv:resnet50) is fetched on the target when the run starts: its backbone is
  // the catalog's, nothing to probe.
  st.weights = !weights
    ? {}
    : isNamedWeights(weights)
      ? { backbone: backboneOfNamed(weights), catalog: true }
      : await describeWeights(app, st.def, weights);
  const b = backboneForWeights(st.c.backbone, st.weights, st.userSet.has('backbone'));
  if (b !== st.c.backbone) {
    st.c.backbone = b;
    if (!st.userSet.has('name') && st.c.dataTrain) st.c.name = defaultName(st.c.dataTrain, st.c.backbone);
    await offerMindcvInstall(app, st.def, b); // weights of a mindcv model chose a mindcv backbone
  }
  refitFreezeOf(st); // a new backbone, or a restored mode of another backbone's stages
}

/** After the backbone changed: a freeze stage the new backbone lacks gives way, and the user is told. */
function refitFreezeOf(st: Short): void {
  const mode = refitFreeze(st.c);
  if (mode === undefined) return;
  const old = st.c.freeze;
  st.c.freeze = mode;
  void vscode.window.showInformationMessage(
    vscode.l10n.t('{0} has no stage for freeze {1}: freeze is now {2}.', st.c.backbone, old, mode),
  );
}

/** The target's and the data's answers for what the user has not set. */
function resolve(app: App, st: Short): void {
  const r = resolvedFor(app, st.def, st.c, st.facts, st.userSet.has('batchSize') ? st.c.batchSize : undefined);
  const c = st.c;
  if (!st.userSet.has('imageSize')) c.imageSize = r.imageSize;
  if (!st.userSet.has('batchSize')) c.batchSize = r.batchSize;
  if (!st.userSet.has('ampLevel')) c.ampLevel = r.ampLevel;
  c.lossScale = c.ampLevel === 'O0' ? 'none' : 'dynamic';
  c.sink = r.sink;
  c.workers = r.workers;
  c.checkpointEverySteps = r.checkpointEverySteps;
}

type DataItem = vscode.QuickPickItem & { use?: string; browse?: boolean };

async function dataStep(app: App, st: Short, info: StepInfo): Promise<string | undefined> {
  const def = st.def;
  const r = await pick<DataItem>({
    ...info,
    placeholder: vscode.l10n.t(
      'Training data on {0}: an image folder (one sub-folder per class). Type a path to use another.',
      def.label,
    ),
    items: async () => {
      const items: DataItem[] = [];
      const last = st.c.dataTrain;
      const found = def.kind === 'local' ? workspaceImageFolders() : [];
      const lastFound = found.find((f) => f.path === last);
      if (last)
        items.push({
          label: vscode.l10n.t('$(history) {0}', path.basename(last)),
          description: lastFound ? imageFolderDescription(lastFound) : vscode.l10n.t('last used'),
          detail: last,
          use: last,
        });
      for (const f of found) {
        if (f.path === last) continue;
        items.push({
          label: vscode.l10n.t('$(folder-library) {0}', vscode.workspace.asRelativePath(f.path)),
          description: imageFolderDescription(f),
          detail: f.path,
          use: f.path,
        });
      }
      items.push({
        label: vscode.l10n.t('$(folder-opened) Browse…'),
        description: vscode.l10n.t('folders on {0}', def.label),
        browse: true,
      });
      return items;
    },
    extraItems: (v) =>
      /^[~/]/.test(v.trim())
        ? [{ label: vscode.l10n.t('$(check) Use {0}', v.trim()), use: v.trim(), alwaysShow: true }]
        : [],
  });
  if (r === BACK || r === undefined) return undefined;
  if (r.use) {
    if (r.use !== st.c.dataTrain) st.userSet.delete('name');
    return r.use;
  }
  const b = await browse(app, def, info, st.c.dataTrain || browseStart(def), 'folder');
  return b === BACK || b === undefined ? undefined : b;
}

type WeightsItem = CatalogItem;

/** The checkpoint, null for none, undefined when the user left. */
async function weightsStep(app: App, st: Short, info: StepInfo): Promise<string | null | undefined> {
  // The catalog's ImageNet weights for the current backbone (then with the target's cache state), and
  // a row opening the whole catalog.
  const catalog = catalogItems(app, st.def, st.c.backbone);
  const itemsWith = (cat: CatalogItem[]): WeightsItem[] => [
    ...(st.c.pretrained
      ? [
          {
            label: vscode.l10n.t(
              '$(history) {0}',
              isNamedWeights(st.c.pretrained) ? st.c.pretrained : path.basename(st.c.pretrained),
            ),
            description: vscode.l10n.t('last used'),
            detail: st.c.pretrained,
            value: st.c.pretrained,
          },
        ]
      : []),
    {
      label: vscode.l10n.t('$(circle-slash) None'),
      description: vscode.l10n.t('random initial weights: every layer trains (freeze none)'),
      value: null,
    },
    ...placeBrowse<WeightsItem>(cat, {
      label: vscode.l10n.t('$(folder-opened) Browse for a checkpoint…'),
      description: vscode.l10n.t('.ckpt or .safetensors: from mindcv / ModelZoo, or a run of your own'),
    }),
  ];
  const items = itemsWith(catalog.now);
  const r = await pick<WeightsItem>({
    ...info,
    items,
    later: catalog.later.then(itemsWith),
    placeholder: vscode.l10n.t(
      "Pretrained weights (optional: without them every layer trains from scratch). Type a checkpoint's path to use it.",
    ),
    active: items[0].label,
    extraItems: (v) =>
      /^[~/].*\.(ckpt|safetensors)$/i.test(v.trim())
        ? [{ label: vscode.l10n.t('$(check) Use {0}', v.trim()), value: v.trim(), alwaysShow: true }]
        : [],
  });
  if (r === BACK || r === undefined) return undefined;
  if (isCatalogPick(r)) {
    const v = await afterCatalogPick(app, st.def, st.c.backbone, r, catalog, info);
    return v === undefined ? weightsStep(app, st, info) : v;
  }
  if (r.value !== undefined) return r.value;
  // A named source (mindcv:, hf-hub:) is no folder to start in.
  const start =
    st.c.pretrained && !isNamedWeights(st.c.pretrained)
      ? path.posix.dirname(st.c.pretrained)
      : st.c.dataTrain
        ? path.dirname(st.c.dataTrain)
        : browseStart(st.def);
  const file = await browse(app, st.def, info, start, 'file');
  if (file === BACK) return weightsStep(app, st, info);
  return file;
}

type SummaryItem = vscode.QuickPickItem & { act: SummaryKey | 'launch' | 'save' | 'all' | 'preview' };

/**
 * The chosen folder's data check: `preview` without thumbnails (`--samples 0`: no image is decoded
 * for display and MindSpore is not loaded), started when the summary first shows it.
 */
function dataCheck(app: App, st: Short): { now: DataCheck; done: Promise<DataCheck> } {
  const { def } = st;
  const dir = st.c.dataTrain;
  return dataChecks.check(`${def.id}\0${dir}`, async () => {
    await app.ctx.ensureRunner(def);
    return runPreview(app.ctx.transport(def), dir, { samples: 0, timeoutMs: LONG_TIMEOUT_MS }).result;
  });
}

async function summary(app: App, st: Short, info: StepInfo): Promise<SummaryItem['act'] | undefined> {
  const input = {
    choices: st.c,
    target: st.def.label,
    data: st.facts,
    weights: st.weights,
    resolved: resolvedFor(app, st.def, st.c, st.facts),
  };
  const launch: SummaryItem = {
    label: vscode.l10n.t('$(rocket) Launch on {0}', st.def.label),
    description: vscode.l10n.t('validate, then start the run'),
    act: 'launch',
  };
  const itemsWith = (check: DataCheck): SummaryItem[] => [
    launch,
    { label: '', kind: vscode.QuickPickItemKind.Separator, act: 'launch' },
    ...summaryLines(input, translate).flatMap((l): SummaryItem[] => {
      const line: SummaryItem = { label: vscode.l10n.t('{0}: {1}', l.label, l.value), description: l.note, act: l.key };
      if (l.key !== 'data' || !st.c.dataTrain) return [line];
      // Under the Data line: what the preview found; picking either opens the Preview Data panel.
      return [
        line,
        ...dataCheckLines(check, translate).map((d): SummaryItem => ({
          label: `${d.kind === 'counts' ? '$(graph)' : d.warn ? '$(warning)' : '$(pass)'} ${d.text}`,
          description: check.state === 'checking' ? undefined : vscode.l10n.t('open Preview Data'),
          act: 'preview',
        })),
      ];
    }),
    { label: '', kind: vscode.QuickPickItemKind.Separator, act: 'launch' },
    {
      label: vscode.l10n.t('$(list-unordered) All settings…'),
      description: vscode.l10n.t('every step of the full wizard'),
      act: 'all',
    },
    { label: vscode.l10n.t('$(save) Save as a spec file, then launch'), act: 'save' },
  ];
  const check = st.c.dataTrain ? dataCheck(app, st) : undefined;
  const r = await pick<SummaryItem>({
    ...info,
    items: itemsWith(check?.now ?? { state: 'checking' }),
    later: check?.now.state === 'checking' ? check.done.then(itemsWith) : undefined,
    placeholder: vscode.l10n.t('{0}. Pick a line to change it, or Launch.', summaryTitle(input, translate)),
    active: launch.label,
  });
  return r === BACK || r === undefined ? undefined : r.act;
}

async function edit(app: App, st: Short, key: SummaryKey, info: StepInfo): Promise<void> {
  const c = st.c;
  const mark = (k: keyof WizardChoices) => st.userSet.add(k);
  const number = async (field: NumberField, prompt: string) => {
    const r = await input({
      ...info,
      value: String(c[field] ?? ''),
      prompt,
      validate: (v) => {
        const p = parseNumberField(field, v, translate);
        return 'error' in p ? p.error : undefined;
      },
    });
    if (typeof r !== 'string') return;
    const p = parseNumberField(field, r, translate);
    if ('value' in p) {
      c[field] = p.value;
      mark(field);
    }
  };
  switch (key) {
    case 'data': {
      const d = await dataStep(app, st, info);
      if (d) {
        c.dataTrain = d;
        st.facts = await describeData(app, st.def, d);
        if (!st.userSet.has('name')) c.name = defaultName(d, c.backbone);
      }
      return;
    }
    case 'pretrained': {
      const w = await weightsStep(app, st, info);
      if (w !== undefined) await useWeights(app, st, w);
      return;
    }
    case 'imageSize':
      return number('imageSize', vscode.l10n.t('Image size in pixels (the images are resized and cropped to it)'));
    case 'epochs':
      return number('epochs', vscode.l10n.t('Epochs'));
    case 'batchSize':
      return number('batchSize', vscode.l10n.t('Batch size per device'));
    case 'lr':
      return number('lr', vscode.l10n.t('Learning rate (Momentum 0.9)'));
    case 'backbone':
      if (
        (await choose(
          info,
          BACKBONES,
          c.backbone,
          vscode.l10n.t('Backbone (a new classification head is added)'),
          (v) => {
            c.backbone = v;
            mark('backbone');
            if (!st.userSet.has('name')) c.name = defaultName(c.dataTrain, v);
            refitFreezeOf(st);
          },
        )) === 'next'
      )
        await offerMindcvInstall(app, st.def, c.backbone);
      return;
    case 'freeze':
      await choose(info, freezeModesFor(c.backbone), c.freeze, vscode.l10n.t('What to freeze'), (v) => {
        c.freeze = v;
        st.freezeChosen = true;
        st.userFreeze = v;
      });
      return;
    case 'amp':
      await choose(info, AMP_LEVELS, c.ampLevel, vscode.l10n.t('Automatic mixed precision level'), (v) => {
        c.ampLevel = v;
        mark('ampLevel');
      });
      return;
    case 'devices': {
      const choices = npuChoices(app.targets.doctorOutput(st.def.id), translate);
      if (choices.length <= 1) {
        void vscode.window.showInformationMessage(
          choices.length === 0
            ? vscode.l10n.t(
                '{0} has no NPU: runs train on its CPU; "All settings…" also offers other machines.',
                st.def.label,
              )
            : vscode.l10n.t('{0} has one NPU; "All settings…" also offers other machines.', st.def.label),
        );
        return;
      }
      const current = new Set(c.deviceIds ?? [0]);
      const r = await pickMany({
        ...info,
        items: choices.map((d) => ({ label: d.label, description: d.description, id: d.id })),
        placeholder: vscode.l10n.t('NPUs to train on (more than one trains data-parallel through msrun)'),
        selected: (i) => current.has(i.id),
      });
      if (r === BACK || r === undefined) return;
      c.deviceIds = r.map((i) => i.id);
      c.devices = c.deviceIds.length;
      return;
    }
    case 'name': {
      const r = await input({
        ...info,
        value: c.name,
        prompt: vscode.l10n.t('Run name'),
        validate: (v: string) => checkName(v, translate),
      });
      if (typeof r === 'string') {
        c.name = r.trim();
        mark('name');
      }
      return;
    }
  }
}
