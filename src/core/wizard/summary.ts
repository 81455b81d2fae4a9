// The short path's one summary: every setting of the run on its own line (what it is, and why when
// the wizard chose it for the target or the data), any of which can be picked to change it, then
// Launch, or All settings… for the full step-by-step wizard. A pure model: the glue turns it into a
// quick pick and asks for the picked line's new value.
import type { DataCheck } from '../preview/check';
import { RECIPE_DEFAULTS, type WizardChoices } from '../spec/builder';
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

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The summary's lines, in the order the wizard asks them. */
export function summaryLines(i: SummaryInput): SummaryLine[] {
  const c = i.choices;
  const r = i.resolved?.reasons ?? {};
  const data = i.data;
  const dataNote =
    data && (data.classes !== undefined || data.images !== undefined)
      ? [
          data.classes !== undefined ? plural(data.classes, 'class', 'classes') : '',
          data.images !== undefined ? plural(data.images, 'image') : '',
        ]
          .filter(Boolean)
          .join(', ')
      : undefined;
  const lossNote = c.lossScale === 'none' ? 'no loss scaling' : c.lossScale ? `${c.lossScale} loss scaling` : undefined;
  return [
    { key: 'data', label: 'Data', value: c.dataTrain || '(none chosen)', note: dataNote },
    {
      key: 'imageSize',
      label: 'Image size',
      value: `${c.imageSize ?? 224} px`,
      note: c.imageSize === i.resolved?.imageSize ? r.imageSize : undefined,
    },
    {
      key: 'backbone',
      label: 'Backbone',
      value: c.backbone,
      note:
        c.pretrained && c.backbone === i.weights?.backbone
          ? 'what the weights were trained as'
          : c.backbone === RECIPE_DEFAULTS.backbone
            ? 'recipe default'
            : undefined,
    },
    {
      key: 'pretrained',
      label: 'Weights',
      value: c.pretrained ?? 'none (random initial weights)',
    },
    {
      key: 'freeze',
      label: 'Freeze',
      value: c.freeze,
      note:
        c.freeze === 'none'
          ? c.pretrained
            ? 'every layer trains'
            : 'every layer trains: there are no pretrained weights to keep'
          : c.freeze === 'backbone'
            ? 'only the new head trains'
            : undefined,
    },
    {
      key: 'amp',
      label: 'Mixed precision',
      value: c.ampLevel,
      note:
        [c.ampLevel === i.resolved?.ampLevel ? r.ampLevel : undefined, lossNote].filter(Boolean).join('; ') ||
        undefined,
    },
    { key: 'epochs', label: 'Epochs', value: String(c.epochs) },
    {
      key: 'batchSize',
      label: 'Batch size',
      value: String(c.batchSize),
      note: c.batchSize === i.resolved?.batchSize ? r.batchSize : undefined,
    },
    { key: 'lr', label: 'Learning rate', value: String(c.lr), note: 'Momentum 0.9' },
    {
      key: 'devices',
      label: 'Devices',
      value: c.deviceIds?.length ? c.deviceIds.map((d) => `NPU ${d}`).join(', ') : `${c.devices} on ${i.target}`,
      note:
        [
          c.nodes && c.nodes.length > 1 ? `${c.nodes.length} machines` : '',
          c.workers !== undefined ? `${plural(c.workers, 'loader thread')}` : '',
          c.checkpointEverySteps !== undefined ? `checkpoint every ${plural(c.checkpointEverySteps, 'step')}` : '',
          c.sink === false ? 'no sink mode' : '',
        ]
          .filter(Boolean)
          .join(', ') || undefined,
    },
    { key: 'name', label: 'Name', value: c.name },
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
export function dataCheckLines(check: DataCheck): DataCheckLine[] {
  switch (check.state) {
    case 'checking':
      return [
        { kind: 'counts', text: 'Data check: checking…', warn: false },
        { kind: 'problems', text: 'Problems: checking…', warn: false },
      ];
    case 'failed':
      return [
        { kind: 'counts', text: 'Data check: could not read the folder', warn: true },
        { kind: 'problems', text: `Problems: ${check.message}`, warn: true },
      ];
    case 'done':
      return [
        { kind: 'counts', text: `Data check: ${check.counts}`, warn: false },
        { kind: 'problems', text: `Problems: ${check.problems}`, warn: !check.clean },
      ];
  }
}

/** The first line of the summary: what will happen, in one sentence. */
export function summaryTitle(i: SummaryInput): string {
  const c = i.choices;
  return `${c.name}: ${c.backbone} on ${i.target}, ${plural(c.epochs, 'epoch')}, ${c.imageSize ?? 224} px`;
}

/**
 * Weights chosen in the short path: none means nothing to keep frozen, so freeze becomes `none`
 * (a frozen random backbone only trains a head on random features); a checkpoint after that brings
 * back the recipe's frozen backbone, unless the user picked a freeze mode themselves.
 */
export function withPretrained(
  c: WizardChoices,
  pretrained: string | undefined,
  freezeChosenByUser: boolean,
): WizardChoices {
  if (freezeChosenByUser) return { ...c, pretrained };
  return { ...c, pretrained, freeze: pretrained === undefined ? 'none' : RECIPE_DEFAULTS.freeze };
}
