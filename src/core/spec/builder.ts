// The "Start Ascend fine-tune" wizard's choices, turned into a run spec (docs/protocol.md,
// section 5). Defaults, choices and ranges are the reference recipe's, read from the runner's
// schema (runner/ascend_finetune/spec.schema.json): resnet50, frozen backbone, O2 with dynamic loss
// scaling, Momentum lr 0.01 / 0.9, batch 32, 10 epochs, checkpoint every 1000 steps, keep 5, sink
// mode on. Only the choices the wizard asks for and the recipe's fixed parts are written, so a
// saved spec file stays short and readable.
import { enumOf, fieldSchema, specDefault } from './fields';
import { english, type Translate } from '../l10n';
import { applyKnobs, knobsFromSpec, type Knobs } from './knobs';
import { isNamedWeights } from './weightSources';
import { problemLine, runnerProblemWords, type ProblemWording } from './problemWords';
import { checkSpec, type ProblemWords, type SpecProblem } from './schema';

export type Backbone = 'resnet18' | 'resnet34' | 'resnet50' | 'resnet101';
export type FreezeMode = 'backbone' | 'none' | 'up_to:layer1' | 'up_to:layer2' | 'up_to:layer3' | 'up_to:layer4';
export type AmpLevel = 'O2' | 'O0' | 'O1' | 'O3' | 'auto';

/** A field's enum values from the schema, its default first (the order the wizard offers them). */
function defaultFirst<T extends string>(dotted: string): readonly T[] {
  const def = specDefault(dotted) as T;
  return [def, ...(enumOf(dotted) as T[]).filter((v) => v !== def)];
}

export const BACKBONES: readonly Backbone[] = enumOf('model.backbone') as Backbone[];
export const FREEZE_MODES: readonly FreezeMode[] = defaultFirst<FreezeMode>('model.freeze');
export const AMP_LEVELS: readonly AmpLevel[] = defaultFirst<AmpLevel>('amp.level');

/** The runner's mindcv backbones and their stages (runner/ascend_finetune/backbones.json). */
interface BackbonesFile {
  backbones: Record<string, { stages: { name: string }[] }>;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const MINDCV_BACKBONES: BackbonesFile = require('../../../runner/ascend_finetune/backbones.json');
const RESNET_STAGES = ['layer1', 'layer2', 'layer3', 'layer4'];

/** A backbone the runner builds with mindcv (it then needs mindcv, PyYAML and tqdm on the target). */
export function isMindcvBackbone(backbone: string): boolean {
  return Object.hasOwn(MINDCV_BACKBONES.backbones, backbone);
}

/** The freeze modes of one backbone (the schema lists every backbone's stages; the runner refuses
 * a stage the chosen backbone does not have), the default first. */
export function freezeModesFor(backbone: string): readonly FreezeMode[] {
  const stages = (MINDCV_BACKBONES.backbones[backbone]?.stages.map((s) => s.name) ?? RESNET_STAGES).map(
    (s) => `up_to:${s}`,
  );
  return FREEZE_MODES.filter((m) => !m.startsWith('up_to:') || stages.includes(m));
}

export interface WizardChoices {
  name: string;
  /** The ImageFolder root, as a path on the target. */
  dataTrain: string;
  backbone: Backbone;
  /** A `.ckpt`/`.safetensors` on the target, or undefined for none. */
  pretrained?: string;
  freeze: FreezeMode;
  ampLevel: AmpLevel;
  epochs: number;
  batchSize: number;
  lr: number;
  /** NPUs to use; more than one trains data-parallel through msrun. */
  devices: number;
  /** Which devices (logical ids), when picked; otherwise devices 0..devices-1. */
  deviceIds?: number[];
  /** Several machines (`device.nodes`, the master first), each training on `deviceIds`; unset: one. */
  nodes?: string[];
  /** The rest is decided for the target and the data (src/core/wizard/defaults.ts) or kept from a
   * spec file; unset: not written, so the schema's default (or the file's value) applies. */
  imageSize?: number;
  workers?: number;
  sink?: boolean;
  lossScale?: LossScale;
  checkpointEverySteps?: number;
  /** Kept from a spec file (the wizard does not ask): Fine-tune from the Best Trial keeps the trial's. */
  checkpointKeepMax?: number;
  /** The "Training options" step's knobs (src/core/spec/knobs.ts); those at their default are absent. */
  knobs?: Knobs;
}

export type LossScale = 'dynamic' | 'fixed' | 'none';

/** The reference recipe's choices (reference/reference-recipe.txt), from the schema's defaults. */
export const RECIPE_DEFAULTS: Omit<WizardChoices, 'name' | 'dataTrain'> = {
  backbone: specDefault('model.backbone') as Backbone,
  freeze: specDefault('model.freeze') as FreezeMode,
  ampLevel: specDefault('amp.level') as AmpLevel,
  epochs: specDefault('train.epochs') as number,
  batchSize: specDefault('data.batch_size') as number,
  lr: specDefault('train.lr') as number,
  devices: (specDefault('device.ids') as number[]).length,
};

function numberField(label: (t: Translate) => string, dotted: string) {
  const rule = fieldSchema(dotted.split('.'))!;
  const types = ([] as string[]).concat(rule.type ?? []);
  return {
    label,
    integer: types.includes('integer'),
    min: rule.exclusiveMinimum ?? rule.minimum ?? -Infinity,
    max: rule.maximum ?? Infinity,
    minExclusive: rule.exclusiveMinimum !== undefined,
  };
}

/** What a numeric wizard field accepts: the spec's own ranges, so validate rarely has news. */
export const NUMBER_FIELDS = {
  imageSize: numberField((t) => t('image size'), 'data.image_size'),
  epochs: numberField((t) => t('epochs'), 'train.epochs'),
  batchSize: numberField((t) => t('batch size per device'), 'data.batch_size'),
  lr: numberField((t) => t('learning rate'), 'train.lr'),
};
export type NumberField = keyof typeof NUMBER_FIELDS;

/** The value typed into an input box, or the reason it is refused (for `validateInput`). */
export function parseNumberField(
  field: NumberField,
  text: string,
  t: Translate = english,
): { value: number } | { error: string } {
  const f = NUMBER_FIELDS[field];
  const typed = text.trim();
  const value = typed === '' ? NaN : Number(typed);
  const label = f.label(t);
  if (!Number.isFinite(value)) return { error: t('{0} must be a number', label) };
  if (f.integer && !Number.isInteger(value)) return { error: t('{0} must be a whole number', label) };
  const low = f.minExclusive ? value <= f.min : value < f.min;
  if (low || value > f.max)
    return {
      error: f.minExclusive
        ? t('{0} must be greater than {1} and at most {2}', label, f.min, f.max)
        : t('{0} must be at least {1} and at most {2}', label, f.min, f.max),
    };
  return { value };
}

/** A run name the runner accepts (non-empty); its slug goes into the run id. */
export function checkName(name: string, t: Translate = english): string | undefined {
  return name.trim() === '' ? t('a run needs a name') : undefined;
}

/** A default run name from the data folder, e.g. `/data/flowers/` -> `flowers-resnet50`. */
export function defaultName(dataTrain: string, backbone: Backbone): string {
  const base =
    dataTrain
      .replace(/[\\/]+$/, '')
      .split(/[\\/]/)
      .pop() || 'run';
  return `${base}-${backbone}`;
}

export interface RunSpec {
  name: string;
  // The index signatures hold the knobs (data.augment, train.ema, ...), when chosen.
  data: { train: string; batch_size: number; image_size?: number; workers?: number; [knob: string]: unknown };
  model: { backbone: Backbone; pretrained: string | null; freeze: FreezeMode };
  train: { epochs: number; optimizer: 'momentum'; lr: number; momentum: number; [knob: string]: unknown };
  amp: { level: AmpLevel; loss_scale: LossScale };
  sink: { enabled: boolean };
  checkpoint: { every_steps: number; keep_max: number };
  device: { ids: number[]; nodes?: string[] };
}

/** The spec the wizard writes. The recipe's fixed parts (optimizer, loss scaling, checkpoints) are spelled out. */
export function buildSpec(c: WizardChoices): RunSpec {
  const spec: RunSpec = {
    name: c.name.trim(),
    data: {
      train: c.dataTrain,
      batch_size: c.batchSize,
      ...(c.imageSize !== undefined ? { image_size: c.imageSize } : {}),
      ...(c.workers !== undefined ? { workers: c.workers } : {}),
    },
    model: { backbone: c.backbone, pretrained: c.pretrained ?? null, freeze: c.freeze },
    train: { epochs: c.epochs, optimizer: 'momentum', lr: c.lr, momentum: specDefault('train.momentum') as number },
    amp: { level: c.ampLevel, loss_scale: c.lossScale ?? 'dynamic' },
    sink: { enabled: c.sink ?? (specDefault('sink.enabled') as boolean) },
    checkpoint: {
      every_steps: c.checkpointEverySteps ?? (specDefault('checkpoint.every_steps') as number),
      keep_max: c.checkpointKeepMax ?? (specDefault('checkpoint.keep_max') as number),
    },
    device: {
      ids: c.deviceIds?.length ? [...c.deviceIds] : Array.from({ length: Math.max(1, c.devices) }, (_, i) => i),
      ...(c.nodes && c.nodes.length > 1 ? { nodes: [...c.nodes] } : {}),
    },
  };
  return applyKnobs(spec as unknown as Record<string, unknown>, c.knobs ?? {}) as unknown as RunSpec;
}

/** The spec as a file (`*.ascend.json`). */
export function specText(spec: RunSpec): string {
  return JSON.stringify(spec, null, 2) + '\n';
}

/**
 * Wizard choices from an existing spec object (a `*.ascend.json`), so the wizard can start from a
 * file; anything missing or of the wrong type falls back to the recipe's default.
 */
export function choicesFromSpec(spec: unknown): Partial<WizardChoices> {
  const o = obj(spec);
  const data = obj(o.data);
  const model = obj(o.model);
  const train = obj(o.train);
  const amp = obj(o.amp);
  const device = obj(o.device);
  const sink = obj(o.sink);
  const checkpoint = obj(o.checkpoint);
  const out: Partial<WizardChoices> = {};
  if (typeof o.name === 'string') out.name = o.name;
  if (typeof data.train === 'string') out.dataTrain = data.train;
  if (typeof model.pretrained === 'string') out.pretrained = model.pretrained;
  if (oneOf(BACKBONES, model.backbone)) out.backbone = model.backbone;
  if (oneOf(FREEZE_MODES, model.freeze)) out.freeze = model.freeze;
  if (oneOf(AMP_LEVELS, amp.level)) out.ampLevel = amp.level;
  if (Number.isInteger(train.epochs)) out.epochs = train.epochs as number;
  if (Number.isInteger(data.batch_size)) out.batchSize = data.batch_size as number;
  if (typeof train.lr === 'number') out.lr = train.lr;
  if (Number.isInteger(data.image_size)) out.imageSize = data.image_size as number;
  if (Number.isInteger(data.workers)) out.workers = data.workers as number;
  if (typeof sink.enabled === 'boolean') out.sink = sink.enabled;
  if (oneOf(['dynamic', 'fixed', 'none'] as const, amp.loss_scale)) out.lossScale = amp.loss_scale;
  if (Number.isInteger(checkpoint.every_steps)) out.checkpointEverySteps = checkpoint.every_steps as number;
  if (Number.isInteger(checkpoint.keep_max)) out.checkpointKeepMax = checkpoint.keep_max as number;
  if (Array.isArray(device.ids) && device.ids.length > 0) {
    out.devices = device.ids.length;
    if (device.ids.every((i) => Number.isInteger(i) && (i as number) >= 0)) out.deviceIds = device.ids as number[];
  }
  if (Array.isArray(device.nodes) && device.nodes.length > 1 && device.nodes.every((n) => typeof n === 'string'))
    out.nodes = device.nodes as string[];
  const knobs = knobsFromSpec(spec);
  if (Object.keys(knobs).length > 0) out.knobs = knobs;
  return out;
}

/** One line for a tooltip, e.g. `resnet50 · freeze backbone · O2 · 10 epochs · batch 32 · lr 0.01`. */
export function summarizeSpec(spec: unknown): string {
  const c = { ...RECIPE_DEFAULTS, ...choicesFromSpec(spec) };
  return [
    c.backbone,
    `freeze ${c.freeze}`,
    c.ampLevel,
    `${c.epochs} epochs`,
    `batch ${c.batchSize}`,
    `lr ${c.lr}`,
  ].join(' · ');
}

function obj(x: unknown): Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x) ? (x as Record<string, unknown>) : {};
}

function oneOf<T extends string>(values: readonly T[], x: unknown): x is T {
  return typeof x === 'string' && (values as readonly string[]).includes(x);
}

/**
 * A spec file's fields with the wizard's on top, section by section: fields the wizard does not
 * ask about (image_size, val, schedule, ...) keep the file's values.
 */
export function mergeSpec(base: unknown, built: RunSpec): Record<string, unknown> {
  const out: Record<string, unknown> = { ...obj(base) };
  for (const [k, v] of Object.entries(built)) {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) {
      out[k] = v;
      continue;
    }
    // One level deeper too: a knob's object (train.early_stopping) keeps the file's other fields.
    const sec: Record<string, unknown> = { ...obj(out[k]) };
    for (const [f, fv] of Object.entries(v as Record<string, unknown>))
      sec[f] = Object.keys(obj(fv)).length > 0 ? { ...obj(sec[f]), ...obj(fv) } : fv;
    out[k] = sec;
  }
  // The wizard asked which machines: one machine means none of the base's other nodes.
  if (built.device.nodes === undefined && 'nodes' in obj(out.device)) {
    const { nodes: _dropped, ...device } = obj(out.device);
    out.device = device;
  }
  // The wizard showed the file's knobs and asked: one it left at the default is the default.
  return applyKnobs(out, knobsFromSpec(built));
}

/** The slug the runner makes of a name (docs/protocol.md, section 1), for file names. */
export function slugOf(name: string): string {
  return (
    name
      .replace(/[^A-Za-z0-9_.-]+/g, '-')
      .replace(/^[-.]+|[-.]+$/g, '')
      .slice(0, 40) || 'run'
  );
}

/** Where the wizard puts a spec on the target before `validate` and `launch` (`~` is expanded there). */
export function targetSpecPath(name: string, now: Date): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, '')
    .replace('T', '-');
  return `~/.ascend-finetune/specs/${stamp}-${slugOf(name)}.json`;
}

/**
 * `validate`'s problems (`{ok, problems: [{path, message, fix}]}`) as lines; empty when none can be read.
 * With a wording they are said in its language: a problem's own `words` (the local check's), or
 * the words the local checker gives `spec` for the same problem (the runner sends English only).
 */
export function problemLines(output: unknown, opts: { wording?: ProblemWording; spec?: unknown } = {}): string[] {
  const problems = (output as { problems?: unknown } | undefined)?.problems;
  if (!Array.isArray(problems)) return [];
  const { wording, spec } = opts;
  let local: SpecProblem[] | undefined;
  return problems.map((p) => {
    const o = obj(p);
    if (!wording) {
      const where = typeof o.path === 'string' && o.path !== '' ? `${o.path}: ` : '';
      const fix = typeof o.fix === 'string' && o.fix !== '' ? ` (${o.fix})` : '';
      return `${where}${String(o.message ?? 'problem')}${fix}`;
    }
    const problem: SpecProblem = {
      path: typeof o.path === 'string' ? o.path : '',
      message: String(o.message ?? 'problem'),
      fix: typeof o.fix === 'string' ? o.fix : '',
    };
    local ??= spec === undefined ? [] : checkSpec(spec);
    const words = (o.words as ProblemWords | undefined) ?? runnerProblemWords(problem, local);
    return problemLine({ ...problem, words }, wording);
  });
}

/**
 * A spec file's relative paths (`data.train`, `data.val`, `model.pretrained`) made absolute against
 * the file's folder, as the runner would read them there: the wizard launches from a copy in
 * another folder. `~` and absolute paths are left as they are.
 */
export function absolutizeSpecPaths(spec: unknown, baseDir: string, join: (a: string, b: string) => string): unknown {
  const o = obj(spec);
  if (Object.keys(o).length === 0) return spec;
  const fix = (p: unknown) =>
    typeof p === 'string' && p !== '' && !p.startsWith('/') && !p.startsWith('~') && !/^[A-Za-z]:[\\/]/.test(p)
      ? join(baseDir, p)
      : p;
  const data = obj(o.data);
  const model = obj(o.model);
  return {
    ...o,
    ...(o.data !== undefined
      ? {
          data: {
            ...data,
            ...('train' in data ? { train: fix(data.train) } : {}),
            ...('val' in data ? { val: fix(data.val) } : {}),
          },
        }
      : {}),
    ...(o.model !== undefined
      ? {
          model: {
            ...model,
            ...('pretrained' in model && !isNamedWeights(model.pretrained)
              ? { pretrained: fix(model.pretrained) }
              : {}),
          },
        }
      : {}),
  };
}
