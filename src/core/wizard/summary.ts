// The short path's one summary: every setting of the run on its own line (what it is, and why when
// the wizard chose it for the target or the data), any of which can be picked to change it, then
// Launch, or All settings… for the full step-by-step wizard. A pure model: the glue turns it into a
// quick pick and asks for the picked line's new value. Words go through `t` (the glue passes
// vscode.l10n.t; English by default): whole phrases, so a translation keeps its own word order.
import type { DataCheck } from '../preview/check';
import { english, joined, type Translate } from '../l10n';
import { freezeModesFor, RECIPE_DEFAULTS, type FreezeMode, type WizardChoices } from '../spec/builder';
import type { DataFacts, ResolvedDefaults } from './defaults';
import type { WeightsFacts } from './targetData';

export type SummaryKey =
  | 'data'
  | 'imageSize'
  | 'backbone'
  | 'pretrained'
  | 'freeze'
  | 'amp'
  | 'epochs'
  | 'batchSize'
  | 'lr'
  | 'devices'
  | 'name';

export interface SummaryLine {
  key: SummaryKey;
  /** What the setting is ("Image size"). */
  label: string;
  /** Its value as shown ("48 px"). */
  value: string;
  /** Why it has that value, when the wizard chose it ("the images are about 48 px"). */
  note?: string;
}

export interface SummaryInput {
  choices: WizardChoices;
  /** Which target it runs on (its label). */
  target: string;
  data?: DataFacts;
  /** What the chosen weights file was trained as. */
  weights?: WeightsFacts;
  resolved?: ResolvedDefaults;
}

/** The summary's lines, in the order the wizard asks them. */
export function summaryLines(i: SummaryInput, t: Translate = english): SummaryLine[] {
  const c = i.choices;
  const r = i.resolved?.reasons ?? {};
  const data = i.data;
  const list = (parts: string[]) => joined(parts.filter(Boolean), t) || undefined;
  const dataNote =
    data && (data.classes !== undefined || data.images !== undefined)
      ? list([
          data.classes === undefined ? '' : data.classes === 1 ? t('1 class') : t('{0} classes', data.classes),
          data.images === undefined ? '' : data.images === 1 ? t('1 image') : t('{0} images', data.images),
        ])
      : undefined;
  const lossNote =
    c.lossScale === 'none'
      ? t('no loss scaling')
      : c.lossScale === 'dynamic'
        ? t('dynamic loss scaling')
        : c.lossScale === 'fixed'
          ? t('fixed loss scaling')
          : undefined;
  const px = t('{0} px', c.imageSize ?? 224);
  return [
    { key: 'data', label: t('Data'), value: c.dataTrain || t('(none chosen)'), note: dataNote },
    {
      key: 'imageSize',
      label: t('Image size'),
      value: px,
      note: c.imageSize === i.resolved?.imageSize ? r.imageSize : undefined,
    },
    {
      key: 'backbone',
      label: t('Backbone'),
      value: c.backbone,
      note:
        c.pretrained && c.backbone === i.weights?.backbone
          ? t('what the weights were trained as')
          : c.backbone === RECIPE_DEFAULTS.backbone
            ? t('recipe default')
            : undefined,
    },
    {
      key: 'pretrained',
      label: t('Weights'),
      value: c.pretrained ?? t('none (random initial weights)'),
    },
    {
      key: 'freeze',
      label: t('Freeze'),
      value: c.freeze,
      note:
        c.freeze === 'none'
          ? c.pretrained
            ? t('every layer trains')
            : t('every layer trains: there are no pretrained weights to keep')
          : c.freeze === 'backbone'
            ? t('only the new head trains')
            : undefined,
    },
    {
      key: 'amp',
      label: t('Mixed precision'),
      value: c.ampLevel,
      note:
        [c.ampLevel === i.resolved?.ampLevel ? r.ampLevel : undefined, lossNote].filter(Boolean).join(t('; ')) ||
        undefined,
    },
    { key: 'epochs', label: t('Epochs'), value: String(c.epochs) },
    {
      key: 'batchSize',
      label: t('Batch size'),
      value: String(c.batchSize),
      note: c.batchSize === i.resolved?.batchSize ? r.batchSize : undefined,
    },
    { key: 'lr', label: t('Learning rate'), value: String(c.lr), note: t('Momentum 0.9') },
    {
      key: 'devices',
      label: t('Devices'),
      value: c.deviceIds?.length
        ? joined(
            c.deviceIds.map((d) => t('NPU {0}', d)),
            t,
          )
        : c.devices === 1
          ? t('1 device on {0}', i.target)
          : t('{0} devices on {1}', c.devices, i.target),
      note: list([
        c.nodes && c.nodes.length > 1 ? t('{0} machines', c.nodes.length) : '',
        c.workers === undefined ? '' : c.workers === 1 ? t('1 loader thread') : t('{0} loader threads', c.workers),
        c.checkpointEverySteps === undefined
          ? ''
          : c.checkpointEverySteps === 1
            ? t('checkpoint every step')
            : t('checkpoint every {0} steps', c.checkpointEverySteps),
        c.sink === false ? t('no sink mode') : '',
      ]),
    },
    { key: 'name', label: t('Name'), value: c.name },
  ];
}

/** A line of the data check under the Data line: what the preview found, and whether it is a problem. */
export interface DataCheckLine {
  kind: 'counts' | 'problems';
  text: string;
  /** Problems were found (the glue marks the line, and picking it opens the Preview Data panel). */
  warn: boolean;
}

/** The data check's two lines: the counts (classes, train/val images) and the problems, each in one line. */
export function dataCheckLines(check: DataCheck, t: Translate = english): DataCheckLine[] {
  switch (check.state) {
    case 'checking':
      return [
        { kind: 'counts', text: t('Data check: checking…'), warn: false },
        { kind: 'problems', text: t('Problems: checking…'), warn: false },
      ];
    case 'failed':
      return [
        { kind: 'counts', text: t('Data check: could not read the folder'), warn: true },
        { kind: 'problems', text: t('Problems: {0}', check.message), warn: true },
      ];
    case 'done':
      return [
        { kind: 'counts', text: t('Data check: {0}', check.counts), warn: false },
        { kind: 'problems', text: t('Problems: {0}', check.problems), warn: !check.clean },
      ];
  }
}

/** The first line of the summary: what will happen, in one sentence. */
export function summaryTitle(i: SummaryInput, t: Translate = english): string {
  const c = i.choices;
  const size = c.imageSize ?? 224;
  return c.epochs === 1
    ? t('{0}: {1} on {2}, 1 epoch, {3} px', c.name, c.backbone, i.target, size)
    : t('{0}: {1} on {2}, {3} epochs, {4} px', c.name, c.backbone, i.target, c.epochs, size);
}

/**
 * Weights chosen in the short path: none means nothing to keep frozen, so freeze becomes `none`, even
 * over a freeze mode the user picked (a frozen random backbone only trains a head on random features;
 * the None row says "every layer trains"). Weights after that bring back the mode the user picked
 * (`userFreeze`), else the recipe's frozen backbone.
 */
export function withPretrained(
  c: WizardChoices,
  pretrained: string | undefined,
  userFreeze: FreezeMode | undefined,
): WizardChoices {
  if (pretrained === undefined) return { ...c, pretrained, freeze: 'none' };
  return { ...c, pretrained, freeze: userFreeze ?? RECIPE_DEFAULTS.freeze };
}

/**
 * The freeze mode for a backbone that just changed, when the old mode names a stage the new backbone
 * lacks (`up_to:layer3` on convnext_tiny, which the runner would refuse at launch): what withPretrained
 * would choose instead. Undefined when the mode still fits.
 */
export function refitFreeze(c: WizardChoices): FreezeMode | undefined {
  if (freezeModesFor(c.backbone).includes(c.freeze)) return undefined;
  return c.pretrained === undefined ? 'none' : RECIPE_DEFAULTS.freeze;
}
