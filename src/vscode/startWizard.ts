// "Start Ascend fine-tune": a multi-step quick pick with back navigation (target, data folder
// browsed on the target, backbone, pretrained checkpoint, freeze, AMP, epochs, batch size, learning
// rate, NPUs and other machines, name, then launch and/or save as a spec file). Defaults are the reference recipe's;
// `validate` runs on the target before `launch`, and its problems are shown with their fixes.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { RunnerError } from '../core/targets/runnerCli';
import {
  AMP_LEVELS,
  BACKBONES,
  buildSpec,
  checkName,
  defaultName,
  FREEZE_MODES,
  mergeSpec,
  parseNumberField,
  RECIPE_DEFAULTS,
  slugOf,
  type NumberField,
  type WizardChoices,
} from '../core/spec/builder';
import { formatOf, writeSpec } from '../core/spec/writer';
import { listFolder } from '../core/targets/ops';
import { nodeAddress, npuChoices, type TargetDef } from '../core/targets/model';
import type { CommandId } from '../shared/commands';
import type { App } from './app';
import { errorText } from './context';
import { askPreflight, launchSpec } from './launch';
import { BACK, input, pick, pickMany, type Back, type StepInfo } from './quickInput';

const TITLE = 'Start Ascend fine-tune';

type Action = 'launch' | 'saveAndLaunch' | 'save';

interface State extends Partial<WizardChoices> {
  targetId?: string;
  action?: Action;
}

export interface WizardStart {
  /** Preselects a target (the Targets view's context menu). */
  targetId?: string;
  /** Choices to start from (a spec file's). */
  choices?: Partial<WizardChoices>;
  /** A spec file's full content: fields the wizard does not ask about are kept. */
  baseSpec?: unknown;
}

type StepResult = 'next' | Back | undefined;
type Step = (app: App, s: State, info: StepInfo, direction: 'forward' | 'back') => Promise<StepResult>;

const DESCRIPTIONS: Record<string, string> = {
  resnet50: 'recipe default',
  backbone: 'train only the new head (recipe default)',
  none: 'train everything',
  'up_to:layer1': 'freeze the stem and layer1',
  'up_to:layer2': 'freeze the stem and layer1-2',
  'up_to:layer3': 'freeze the stem and layer1-3',
  'up_to:layer4': 'freeze the stem and layer1-4',
  O2: 'fp16 except BatchNorm, dynamic loss scaling (recipe default)',
  O0: 'fp32 (fastest on CPU)',
  O1: 'fp16 for white-listed ops',
  O3: 'everything fp16',
  auto: 'O3 on Ascend, O0 on CPU',
};

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
    const r = await pick({ ...info, items, placeholder: 'Where to train', active: current?.label });
    if (r === BACK || r === undefined) return r;
    if (r.id !== s.targetId) {
      s.targetId = r.id;
      s.dataTrain = s.pretrained = undefined; // paths of another machine
    }
    const def = app.ctx.target(r.id);
    // NPUs for a later step; the check also fills the Targets view.
    if (def && app.targets.doctorOutput(def.id) === undefined) void app.targets.check(def);
    return 'next';
  },
  // 2. training data
  async (app, s, info) => {
    const def = targetOf(app, s);
    const r = await browse(app, def, info, s.dataTrain ?? '~', 'folder');
    if (r === BACK || r === undefined) return r;
    s.dataTrain = r;
    return 'next';
  },
  // 3. backbone
  (_app, s, info) =>
    choose(
      info,
      BACKBONES,
      s.backbone ?? RECIPE_DEFAULTS.backbone,
      'Backbone (a new classification head is added)',
      (v) => (s.backbone = v),
    ),
  // 4. pretrained checkpoint
  async (app, s, info) => {
    type Item = vscode.QuickPickItem & { value?: string | null };
    const items: Item[] = [
      { label: '$(circle-slash) None', description: 'start from random weights', value: null },
      { label: '$(folder-opened) Browse on the target…' },
    ];
    if (s.pretrained)
      items.unshift({
        label: `$(check) ${path.posix.basename(s.pretrained)}`,
        description: s.pretrained,
        value: s.pretrained,
      });
    const r = await pick<Item>({
      ...info,
      items,
      placeholder: 'Pretrained backbone weights (.ckpt or .safetensors), optional',
    });
    if (r === BACK || r === undefined) return r;
    if (r.value !== undefined) {
      s.pretrained = r.value ?? undefined;
      return 'next';
    }
    const file = await browse(
      app,
      targetOf(app, s),
      info,
      s.pretrained ? path.posix.dirname(s.pretrained) : s.dataTrain ? path.posix.dirname(s.dataTrain) : '~',
      'file',
    );
    if (file === undefined) return undefined;
    if (file === BACK) return STEPS[3](app, s, info, 'forward'); // back to this step's first choice
    s.pretrained = file;
    return 'next';
  },
  // 5. freeze
  (_app, s, info) =>
    choose(info, FREEZE_MODES, s.freeze ?? RECIPE_DEFAULTS.freeze, 'What to freeze', (v) => (s.freeze = v)),
  // 6. AMP
  (_app, s, info) =>
    choose(
      info,
      AMP_LEVELS,
      s.ampLevel ?? RECIPE_DEFAULTS.ampLevel,
      'Automatic mixed precision level',
      (v) => (s.ampLevel = v),
    ),
  // 7-9. numbers
  (_app, s, info) => numberStep(info, s, 'epochs', 'Epochs'),
  (_app, s, info) => numberStep(info, s, 'batchSize', 'Batch size per device'),
  (_app, s, info) => numberStep(info, s, 'lr', 'Learning rate (Momentum 0.9)'),
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
  // 11. name
  async (_app, s, info) => {
    const r = await input({
      ...info,
      value: s.name ?? defaultName(s.dataTrain ?? 'run', s.backbone ?? RECIPE_DEFAULTS.backbone),
      prompt: 'Run name (part of the run id and the checkpoint names)',
      validate: checkName,
    });
    if (r === BACK || r === undefined) return r;
    s.name = r.trim();
    return 'next';
  },
  // 12. what to do
  async (app, s, info) => {
    const def = targetOf(app, s);
    type Item = vscode.QuickPickItem & { action: Action };
    const items: Item[] = [
      {
        label: `$(rocket) Launch on ${def.label}`,
        description: 'validate, then start a detached run',
        action: 'launch',
      },
      { label: '$(save) Save as a spec file, then launch', action: 'saveAndLaunch' },
      {
        label: '$(save) Save as a spec file only',
        description: '*.ascend.yaml or *.ascend.json in the workspace',
        action: 'save',
      },
    ];
    const r = await pick<Item>({
      ...info,
      items,
      placeholder: `${s.name}: ${s.backbone}, ${s.epochs} epochs on ${s.dataTrain}`,
    });
    if (r === BACK || r === undefined) return r;
    s.action = r.action;
    return 'next';
  },
];

export async function startWizard(app: App, start: WizardStart = {}): Promise<void> {
  const s: State = { ...RECIPE_DEFAULTS, ...start.choices, targetId: start.targetId };
  for (;;) {
    if (!(await runSteps(app, s))) return;
    if ((await execute(app, s, start.baseSpec)) !== 'edit') return;
  }
}

/** Runs the steps from the first; true when the last one was answered. */
async function runSteps(app: App, s: State): Promise<boolean> {
  let i = 0;
  let direction: 'forward' | 'back' = 'forward';
  while (i < STEPS.length) {
    const info: StepInfo = { title: TITLE, step: i + 1, totalSteps: STEPS.length, back: i > 0 };
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
  const choices = npuChoices(app.targets.doctorOutput(s.targetId ?? ''));
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
    placeholder:
      'NPUs to train on (busy ones are in use by other processes; more than one trains data-parallel through msrun)',
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
    placeholder: `Other machines to train with ${master.label} (the master, ${nodeAddress(master)}); none ticked: ${master.label} only. Each uses ${per} NPU(s) and needs the data at the same path.`,
    selected: (i) => current.has(i.address),
  });
  if (r === BACK || r === undefined) return r;
  s.nodes = r.length > 0 ? [nodeAddress(master), ...r.map((i) => i.address)] : undefined;
  return 'next';
}

function targetOf(app: App, s: State): TargetDef {
  const def = app.ctx.target(s.targetId ?? '');
  if (!def) throw new Error('the chosen target is not configured any more');
  return def;
}

async function choose<T extends string>(
  info: StepInfo,
  values: readonly T[],
  current: T,
  placeholder: string,
  set: (v: T) => void,
): Promise<StepResult> {
  const items = values.map((v) => ({ label: v, description: DESCRIPTIONS[v] }));
  const r = await pick({ ...info, items, placeholder, active: current });
  if (r === BACK || r === undefined) return r;
  set(r.label as T);
  return 'next';
}

async function numberStep(info: StepInfo, s: State, field: NumberField, prompt: string): Promise<StepResult> {
  const value = s[field] ?? RECIPE_DEFAULTS[field];
  const r = await input({
    ...info,
    value: String(value),
    prompt: `${prompt} (recipe default ${RECIPE_DEFAULTS[field]})`,
    validate: (v) => {
      const p = parseNumberField(field, v);
      return 'error' in p ? p.error : undefined;
    },
  });
  if (r === BACK || r === undefined) return r;
  const p = parseNumberField(field, r);
  if ('value' in p) s[field] = p.value;
  return 'next';
}

/** A folder (or, in `file` mode, a checkpoint file) picked by browsing the target's file system. */
async function browse(
  app: App,
  def: TargetDef,
  info: StepInfo,
  start: string,
  mode: 'folder' | 'file',
): Promise<string | Back | undefined> {
  const join = def.kind === 'local' ? path.join : path.posix.join;
  type Item = vscode.QuickPickItem & { go?: string; use?: string };
  let dir = start;
  for (;;) {
    const r = await pick<Item>({
      ...info,
      placeholder:
        mode === 'folder'
          ? `Training data on ${def.label}: an ImageFolder root (one sub-folder per class). Type a path to go there.`
          : `Pretrained checkpoint on ${def.label} (.ckpt, .safetensors). Type a path to go there.`,
      items: async () => {
        try {
          const l = await listFolder(app.ctx.python(def), dir, mode === 'file' ? ['.ckpt', '.safetensors'] : []);
          const items: Item[] = [];
          if (mode === 'folder') items.push({ label: '$(check) Use this folder', description: l.path, use: l.path });
          if (l.parent !== l.path) items.push({ label: '$(arrow-up) ..', description: l.parent, go: l.parent });
          for (const f of l.files) items.push({ label: `$(file-binary) ${f}`, use: join(l.path, f) });
          for (const d of l.dirs) items.push({ label: `$(folder) ${d}`, go: join(l.path, d) });
          return items;
        } catch (e) {
          app.ctx.log.warn(`listing ${dir} on ${def.label}: ${errorText(e)}`);
          return [{ label: `$(error) ${errorText(e)}` }, { label: '$(home) Home folder', go: '~' }];
        }
      },
      extraItems: (v) =>
        /^[~/]/.test(v.trim()) ? [{ label: `$(go-to-file) Go to ${v.trim()}`, go: v.trim(), alwaysShow: true }] : [],
    });
    if (r === BACK || r === undefined) return r;
    if (r.use) return r.use;
    if (r.go) dir = r.go;
  }
}

/** Saves and/or launches; 'edit' when validate found problems and the user wants to change the choices. */
async function execute(app: App, s: State, baseSpec: unknown): Promise<'done' | 'edit'> {
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
      title: 'Save the run spec (*.ascend.yaml keeps comments; *.ascend.json also works)',
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
        title: `Ascend: ${choices.name} on ${def.label}`,
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
        `The run spec has ${n} problem${n === 1 ? '' : 's'}`,
        { modal: true, detail: outcome.lines.join('\n') },
        'Edit Choices',
      );
      return a === 'Edit Choices' ? 'edit' : 'done';
    }
    if (outcome.kind === 'held') return outcome.choice === 'edit' ? 'edit' : 'done';
    const { runId } = outcome.record;
    void vscode.window
      .showInformationMessage(`Started Ascend run "${choices.name}" on ${def.label} (${runId}).`, 'Open Console')
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
      `Could not start the run on ${def.label}: ${errorText(e)}`,
      'Show Log',
      'Check Target',
    );
    if (a === 'Show Log') app.ctx.log.show();
    if (a === 'Check Target') void app.targets.check(def);
    return 'done';
  }
}
