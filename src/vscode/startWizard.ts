// The full Start wizard ("All settings…" from the short path's summary, Start from Spec File, Fine-tune
// from a checkpoint): a multi-step quick pick with back navigation (target, data folder browsed on
// the target, backbone, pretrained weights (the catalog's for that backbone, or a file), freeze, AMP,
// epochs, batch size, learning rate, NPUs and other machines when there are any, training options
// (the fine-tuning knobs, optional), name, then launch and/or save as a spec file). Defaults are the
// reference recipe's, resolved for the target (src/core/wizard/defaults.ts); `validate` runs on the
// target before `launch`, and its problems are shown with their fixes. The step counter counts the
// steps this target shows (the NPU step only where there is a choice).
import * as path from 'node:path';
import * as vscode from 'vscode';
import { translate } from './l10n';
import {
  AMP_LEVELS,
  BACKBONES,
  checkName,
  defaultName,
  freezeModesFor,
  parseNumberField,
  RECIPE_DEFAULTS,
  type WizardChoices,
} from '../core/spec/builder';
import { nodeAddress, npuChoices, type TargetDef } from '../core/targets/model';
import { describeData, resolvedFor } from './wizard/data';
import { browse, browseStart, choose, execute, targetOf, type Action, type StepResult } from './wizard/common';
import { ensureHealthy } from './wizard/health';
import { offerMindcvInstall } from './installMindcv';
import { knobsStep } from './wizard/knobsStep';
import { afterCatalogPick, catalogItems, isCatalogPick, placeBrowse, type CatalogItem } from './wizard/weights';
import { backboneForWeights } from '../core/wizard/targetData';
import { backboneOfNamed, isNamedWeights } from '../core/spec/weightSources';
import type { App } from './app';
import { BACK, input, pick, pickMany, type StepInfo } from './quickInput';

interface State extends Partial<WizardChoices> {
  targetId?: string;
  action?: Action;
  /** Fields a spec file or checkpoint gave: not replaced by what is resolved for the target. */
  given?: ReadonlySet<string>;
}

export interface WizardStart {
  /** Preselects a target (the Targets view's context menu). */
  targetId?: string;
  /** Choices to start from (a spec file's). */
  choices?: Partial<WizardChoices>;
  /** A spec file's full content: fields the wizard does not ask about are kept. */
  baseSpec?: unknown;
}

type Step = (app: App, s: State, info: StepInfo, direction: 'forward' | 'back') => Promise<StepResult>;

const STEPS: Step[] = [
  // 1. target
  async (app, s, info) => {
    const items = app.ctx.targets.map((t) => ({
      label: t.label,
      description: t.description,
      id: t.id,
      iconPath: new vscode.ThemeIcon(t.kind === 'ssh' ? 'remote' : 'vm'),
    }));
    const current = app.ctx.target(s.targetId ?? '');
    const r = await pick({ ...info, items, placeholder: vscode.l10n.t('Where to train'), active: current?.label });
    if (r === BACK || r === undefined) return r;
    if (r.id !== s.targetId) {
      s.targetId = r.id;
      s.dataTrain = s.pretrained = undefined; // paths of another machine
    }
    const def = app.ctx.target(r.id);
    // Health before questions: doctor (if not run yet) says whether it can train, and the NPUs for a later step.
    if (def && (await ensureHealthy(app, def, info)) === 'cancel') return undefined;
    const h = def ? app.targets.health(def) : undefined;
    if (h?.ok && !s.given?.has('ampLevel')) s.ampLevel = h.cpuOnly ? 'O0' : RECIPE_DEFAULTS.ampLevel;
    return 'next';
  },
  // 2. training data
  async (app, s, info) => {
    const def = targetOf(app, s);
    const r = await browse(app, def, info, s.dataTrain ?? browseStart(def), 'folder');
    if (r === BACK || r === undefined) return r;
    s.dataTrain = r;
    return 'next';
  },
  // 3. backbone (a mindcv one on a target without mindcv: Install mindcv on Target is offered)
  async (app, s, info) => {
    const r = await choose(
      info,
      BACKBONES,
      s.backbone ?? RECIPE_DEFAULTS.backbone,
      vscode.l10n.t('Backbone (a new classification head is added)'),
      (v) => (s.backbone = v),
    );
    if (r === 'next' && s.backbone) await offerMindcvInstall(app, targetOf(app, s), s.backbone);
    return r;
  },
  // 4. pretrained checkpoint: none, the catalog's weights for this backbone (cached on the target or
  // downloaded when picked: wizard/weights.ts) or another backbone's (which then becomes the
  // backbone), or a file browsed on the target
  async (app, s, info) => {
    const backbone = s.backbone ?? RECIPE_DEFAULTS.backbone;
    const catalog = catalogItems(app, targetOf(app, s), backbone);
    const itemsWith = (cat: CatalogItem[]): CatalogItem[] => [
      ...(s.pretrained
        ? [
            {
              label: vscode.l10n.t(
                '$(check) {0}',
                isNamedWeights(s.pretrained) ? s.pretrained : path.posix.basename(s.pretrained),
              ),
              description: s.pretrained,
              value: s.pretrained,
            },
          ]
        : []),
      {
        label: vscode.l10n.t('$(circle-slash) None'),
        description: vscode.l10n.t('start from random weights; the freeze step then offers none first'),
        value: null,
      },
      ...placeBrowse(cat, { label: vscode.l10n.t('$(folder-opened) Browse on the target…') }),
    ];
    const r = await pick<CatalogItem>({
      ...info,
      items: itemsWith(catalog.now),
      later: catalog.later.then(itemsWith),
      placeholder: vscode.l10n.t('Pretrained backbone weights (.ckpt or .safetensors), optional'),
    });
    if (r === BACK || r === undefined) return r;
    if (isCatalogPick(r)) {
      const v = await afterCatalogPick(app, targetOf(app, s), backbone, r, catalog, info);
      if (v === undefined) return STEPS[3](app, s, info, 'forward');
      s.pretrained = v;
      // Another backbone's weights (from the whole catalog) load into that backbone only.
      const b = backboneForWeights(backbone, { backbone: backboneOfNamed(v), catalog: true }, true);
      if (b !== backbone) {
        s.backbone = b;
        await offerMindcvInstall(app, targetOf(app, s), b);
      }
      return 'next';
    }
    if (r.value !== undefined) {
      s.pretrained = r.value ?? undefined;
      // A frozen random backbone trains a head on random features: without weights every layer
      // trains, unless the user picks another mode on the next step (it is focused, not forced).
      if (r.value === null) s.freeze = 'none';
      return 'next';
    }
    const file = await browse(
      app,
      targetOf(app, s),
      info,
      // A named source (mindcv:, hf-hub:) is no folder to start in.
      s.pretrained && !isNamedWeights(s.pretrained)
        ? path.posix.dirname(s.pretrained)
        : s.dataTrain
          ? path.posix.dirname(s.dataTrain)
          : '~',
      'file',
    );
    if (file === undefined) return undefined;
    if (file === BACK) return STEPS[3](app, s, info, 'forward'); // back to this step's first choice
    s.pretrained = file;
    return 'next';
  },
  // 5. freeze
  (_app, s, info) =>
    choose(
      info,
      freezeModesFor(s.backbone ?? RECIPE_DEFAULTS.backbone),
      s.freeze ?? RECIPE_DEFAULTS.freeze,
      vscode.l10n.t('What to freeze'),
      (v) => (s.freeze = v),
    ),
  // 6. AMP
  (_app, s, info) =>
    choose(
      info,
      AMP_LEVELS,
      s.ampLevel ?? RECIPE_DEFAULTS.ampLevel,
      vscode.l10n.t('Automatic mixed precision level'),
      (v) => (s.ampLevel = v),
    ),
  // 7-9. numbers
  (_app, s, info) => numberStep(info, s, 'epochs', vscode.l10n.t('Epochs')),
  (_app, s, info) => numberStep(info, s, 'batchSize', vscode.l10n.t('Batch size per device')),
  (_app, s, info) => numberStep(info, s, 'lr', vscode.l10n.t('Learning rate (Momentum 0.9)')),
  // 10. NPUs (asked when the target's doctor lists more than one), then other machines (asked when
  // the target is an SSH host and there are other SSH targets); several of either train through
  // msrun. Both are one step, so the step count stays the same for everyone else.
  async (app, s, info, direction) => {
    let onMachines = direction === 'back' && otherMachines(app, s).length > 0;
    for (;;) {
      if (!onMachines) {
        const r = await npuStep(app, s, info, direction);
        if (r !== 'next') return r;
      }
      const m = await machinesStep(app, s, info);
      if (m !== BACK) return m;
      onMachines = false;
      direction = 'back';
    }
  },
  // 11. training options (optional knobs: augmentation, mixup, early stopping, EMA, ...); Continue keeps the recipe.
  (_app, s, info) => knobsStep(info, s),
  // 12. name
  async (_app, s, info) => {
    const r = await input({
      ...info,
      value: s.name ?? defaultName(s.dataTrain ?? 'run', s.backbone ?? RECIPE_DEFAULTS.backbone),
      prompt: vscode.l10n.t('Run name (part of the run id and the checkpoint names)'),
      validate: (v: string) => checkName(v, translate),
    });
    if (r === BACK || r === undefined) return r;
    s.name = r.trim();
    return 'next';
  },
  // 13. what to do
  async (app, s, info) => {
    const def = targetOf(app, s);
    type Item = vscode.QuickPickItem & { action: Action };
    const items: Item[] = [
      {
        label: vscode.l10n.t('$(rocket) Launch on {0}', def.label),
        description: vscode.l10n.t('validate, then start a detached run'),
        action: 'launch',
      },
      { label: vscode.l10n.t('$(save) Save as a spec file, then launch'), action: 'saveAndLaunch' },
      {
        label: vscode.l10n.t('$(save) Save as a spec file only'),
        description: vscode.l10n.t('*.ascend.yaml or *.ascend.json in the workspace'),
        action: 'save',
      },
    ];
    const r = await pick<Item>({
      ...info,
      items,
      placeholder: vscode.l10n.t(
        '{0}: {1}, {2} epochs on {3}',
        s.name ?? '',
        s.backbone ?? '',
        s.epochs ?? '',
        s.dataTrain ?? '',
      ),
    });
    if (r === BACK || r === undefined) return r;
    s.action = r.action;
    return 'next';
  },
];

export async function startWizard(app: App, start: WizardStart = {}): Promise<void> {
  const s: State = { ...RECIPE_DEFAULTS, ...start.choices, targetId: start.targetId };
  const given = new Set(Object.keys(start.choices ?? {}));
  s.given = given;
  for (;;) {
    if (!(await runSteps(app, s))) return;
    // What the steps did not ask and no spec gave is resolved for the target and the data.
    // The batch step was answered above: the checkpoint interval is fitted to that batch, not the recipe's.
    const def = targetOf(app, s);
    const r = resolvedFor(app, def, s, await describeData(app, def, s.dataTrain), s.batchSize);
    if (!given.has('imageSize') && !('image_size' in objOf(objOf(start.baseSpec).data))) s.imageSize = r.imageSize;
    if (!given.has('workers')) s.workers = r.workers;
    if (!given.has('sink')) s.sink = r.sink;
    if (!given.has('lossScale')) s.lossScale = s.ampLevel === 'O0' ? 'none' : 'dynamic';
    if (!given.has('checkpointEverySteps')) s.checkpointEverySteps = r.checkpointEverySteps;
    if ((await execute(app, s, start.baseSpec)) !== 'edit') return;
  }
}

/** The NPU/machines step (10) asks something only with several NPUs or other SSH machines. */
const DEVICE_STEP = 9;

function deviceStepShown(app: App, s: State): boolean {
  return npuChoices(app.targets.doctorOutput(s.targetId ?? '')).length > 1 || otherMachines(app, s).length > 0;
}

/** Runs the steps from the first; true when the last one was answered. */
async function runSteps(app: App, s: State): Promise<boolean> {
  let i = 0;
  let direction: 'forward' | 'back' = 'forward';
  while (i < STEPS.length) {
    // Numbered as shown: without the device step the name is 11/12, not 12/13.
    const skip = s.targetId !== undefined && !deviceStepShown(app, s) ? 1 : 0;
    const info: StepInfo = {
      title: vscode.l10n.t('Start Ascend fine-tune'),
      step: i + 1 - (i > DEVICE_STEP ? skip : 0),
      totalSteps: STEPS.length - skip,
      back: i > 0,
    };
    const r = await STEPS[i](app, s, info, direction);
    if (r === undefined) return false;
    if (r === BACK) {
      direction = 'back';
      i = Math.max(0, i - 1);
    } else {
      direction = 'forward';
      i++;
    }
  }
  return true;
}

async function npuStep(app: App, s: State, info: StepInfo, direction: 'forward' | 'back'): Promise<StepResult> {
  const choices = npuChoices(app.targets.doctorOutput(s.targetId ?? ''), translate);
  if (choices.length <= 1) {
    s.devices = 1;
    s.deviceIds = undefined;
    return direction === 'back' ? BACK : 'next';
  }
  const free = choices.find((c) => !c.busy) ?? choices[0];
  const current = new Set(s.deviceIds ?? [free.id]);
  const items = choices.map((c) => ({
    label: c.label,
    description: c.description,
    id: c.id,
    iconPath: new vscode.ThemeIcon(c.busy ? 'warning' : 'circuit-board'),
  }));
  const r = await pickMany({
    ...info,
    items,
    placeholder: vscode.l10n.t(
      'NPUs to train on (busy ones are in use by other processes; more than one trains data-parallel through msrun)',
    ),
    selected: (i) => current.has(i.id),
  });
  if (r === BACK || r === undefined) return r;
  s.deviceIds = r.map((i) => i.id);
  s.devices = s.deviceIds.length;
  return 'next';
}

/** SSH targets that could join a run on the chosen target (only an SSH target can be a master here). */
function otherMachines(app: App, s: State): TargetDef[] {
  const master = app.ctx.target(s.targetId ?? '');
  return master?.kind === 'ssh' ? app.ctx.targets.filter((t) => t.kind === 'ssh' && t.id !== master.id) : [];
}

/** Which other machines train with the target (`device.nodes`, the target first, as the master). */
async function machinesStep(app: App, s: State, info: StepInfo): Promise<StepResult> {
  const others = otherMachines(app, s);
  if (others.length === 0) {
    s.nodes = undefined;
    return 'next';
  }
  const master = targetOf(app, s);
  const current = new Set((s.nodes ?? []).slice(1));
  const items = others.map((t) => ({
    label: t.label,
    description: nodeAddress(t),
    address: nodeAddress(t),
    iconPath: new vscode.ThemeIcon('remote'),
  }));
  const per = s.deviceIds?.length ?? s.devices ?? 1;
  const r = await pickMany({
    ...info,
    items,
    allowNone: true,
    placeholder: vscode.l10n.t(
      'Other machines to train with {0} (the master, {1}); none ticked: {2} only. Each uses {3} NPU(s) and needs the data at the same path.',
      master.label,
      nodeAddress(master),
      master.label,
      per,
    ),
    selected: (i) => current.has(i.address),
  });
  if (r === BACK || r === undefined) return r;
  s.nodes = r.length > 0 ? [nodeAddress(master), ...r.map((i) => i.address)] : undefined;
  return 'next';
}

function objOf(x: unknown): Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x) ? (x as Record<string, unknown>) : {};
}

async function numberStep(
  info: StepInfo,
  s: State,
  field: 'epochs' | 'batchSize' | 'lr',
  prompt: string,
): Promise<StepResult> {
  const value = s[field] ?? RECIPE_DEFAULTS[field];
  const r = await input({
    ...info,
    value: String(value),
    prompt: vscode.l10n.t('{0} (recipe default {1})', prompt, RECIPE_DEFAULTS[field]),
    validate: (v) => {
      const p = parseNumberField(field, v, translate);
      return 'error' in p ? p.error : undefined;
    },
  });
  if (r === BACK || r === undefined) return r;
  const p = parseNumberField(field, r, translate);
  if ('value' in p) s[field] = p.value;
  return 'next';
}
