// The short path's last choices, remembered per target (the glue keeps them in workspaceState: data
// and weights are paths of this workspace's machine), so a retry starts where the last one ended.
// What comes back is checked field by field: a stored value of the wrong type is dropped, never trusted.
import {
  AMP_LEVELS,
  BACKBONES,
  FREEZE_MODES,
  parseNumberField,
  type NumberField,
  type WizardChoices,
} from '../spec/builder';

/** The workspaceState key for a target's remembered choices. */
export function rememberKey(targetId: string): string {
  return `ascend.wizard.last.${targetId}`;
}

/** The stored form: only what the user decides (not the values resolved for the target, which are recomputed). */
export interface Remembered {
  dataTrain?: string;
  /** null: "None" was chosen. */
  pretrained?: string | null;
  backbone?: string;
  freeze?: string;
  /** The user picked the freeze mode themselves (a later choice of weights leaves it alone). */
  freezeChosen?: boolean;
  ampLevel?: string;
  imageSize?: number;
  epochs?: number;
  batchSize?: number;
  lr?: number;
  name?: string;
}

export function rememberChoices(c: Partial<WizardChoices>, freezeChosen: boolean): Remembered {
  return {
    dataTrain: c.dataTrain,
    pretrained: c.pretrained ?? null,
    backbone: c.backbone,
    freeze: c.freeze,
    freezeChosen,
    ampLevel: c.ampLevel,
    imageSize: c.imageSize,
    epochs: c.epochs,
    batchSize: c.batchSize,
    lr: c.lr,
    name: c.name,
  };
}

export interface Recalled {
  choices: Partial<WizardChoices>;
  /** The fields the user set last time, so resolved defaults do not overwrite them. */
  userSet: Set<keyof WizardChoices>;
  freezeChosen: boolean;
}

/** Choices from a stored value (anything: an older version's, or junk). */
export function recallChoices(stored: unknown): Recalled {
  const o = (typeof stored === 'object' && stored !== null && !Array.isArray(stored) ? stored : {}) as Record<
    string,
    unknown
  >;
  const choices: Partial<WizardChoices> = {};
  const userSet = new Set<keyof WizardChoices>();
  const set = <K extends keyof WizardChoices>(k: K, v: WizardChoices[K]) => {
    choices[k] = v;
    userSet.add(k);
  };
  if (typeof o.dataTrain === 'string' && o.dataTrain !== '') set('dataTrain', o.dataTrain);
  if (typeof o.pretrained === 'string' && o.pretrained !== '') set('pretrained', o.pretrained);
  else if (o.pretrained === null) userSet.add('pretrained');
  const oneOf = <T extends string>(values: readonly T[], x: unknown): x is T =>
    typeof x === 'string' && (values as readonly string[]).includes(x);
  if (oneOf(BACKBONES, o.backbone)) set('backbone', o.backbone);
  const freezeChosen = o.freezeChosen === true;
  if (oneOf(FREEZE_MODES, o.freeze) && freezeChosen) set('freeze', o.freeze);
  if (oneOf(AMP_LEVELS, o.ampLevel)) set('ampLevel', o.ampLevel);
  const num = (k: NumberField) => {
    const v = o[k];
    if (typeof v !== 'number') return;
    const p = parseNumberField(k, String(v));
    if ('value' in p) set(k, p.value);
  };
  (['imageSize', 'epochs', 'batchSize', 'lr'] as const).forEach(num);
  if (typeof o.name === 'string' && o.name.trim() !== '') set('name', o.name);
  return { choices, userSet, freezeChosen };
}
