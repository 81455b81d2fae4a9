// The full wizard's optional "Training options" step: a list of the fine-tuning knobs
// (src/core/spec/knobs.ts) with their values; Continue goes on, a row opens its value (a pick
// among the schema's values, or a number checked against the schema's range), then the list again.
import * as vscode from 'vscode';
import {
  KNOBS,
  knobChoices,
  knobDefault,
  knobText,
  parseKnobNumber,
  setKnob,
  type Knob,
  type Knobs,
} from '../../core/spec/knobs';
import { fieldSchema } from '../../core/spec/fields';
import { schemaTranslator } from '../../core/spec/schemaL10n';
import { BACK, input, pick, type StepInfo } from '../quickInput';
import type { StepResult } from './common';
import { translate } from '../l10n';

export async function knobsStep(info: StepInfo, s: { knobs?: Knobs }): Promise<StepResult> {
  const knobs: Knobs = { ...s.knobs };
  const CONTINUE = vscode.l10n.t('$(arrow-right) Continue');
  let active = CONTINUE;
  for (;;) {
    type Item = vscode.QuickPickItem & { knob?: Knob };
    const changed = Object.keys(knobs).length;
    const items: Item[] = [
      {
        label: CONTINUE,
        description: changed ? vscode.l10n.t('{0} changed', changed) : vscode.l10n.t('the recipe as it is'),
      },
      ...KNOBS.map((k) => ({ label: k.label(translate), description: knobText(k.path, knobs), knob: k })),
    ];
    const r = await pick<Item>({
      ...info,
      items,
      active,
      placeholder: vscode.l10n.t('Training options (optional): pick one to change it, or Continue'),
    });
    if (r === undefined) return undefined;
    if (r === BACK) {
      s.knobs = knobs;
      return BACK;
    }
    if (!r.knob) {
      s.knobs = knobs;
      return 'next';
    }
    active = r.label;
    if ((await editKnob(info, r.knob, knobs)) === undefined) return undefined;
  }
}

/** One knob's value; BACK (and Escape-free cancel) leaves it as it was. */
async function editKnob(info: StepInfo, k: Knob, knobs: Knobs): Promise<'done' | typeof BACK | undefined> {
  const rule = fieldSchema(k.path.split('.'));
  // The schema's descriptions in VS Code's display language (the schema itself stays English).
  const described = schemaTranslator(vscode.env.language);
  const prompt = vscode.l10n.t('{0} ({1}): {2}', k.label(translate), k.path, described(rule?.description ?? ''));
  if (k.kind === 'number') {
    const current = k.path in knobs ? knobs[k.path] : knobDefault(k.path);
    const r = await input({
      ...info,
      back: true,
      value: current === null ? '' : String(current),
      prompt,
      validate: (v) => {
        const p = parseKnobNumber(k.path, v, translate);
        return 'error' in p ? p.error : undefined;
      },
    });
    if (r === BACK || r === undefined) return r;
    const p = parseKnobNumber(k.path, r, translate);
    if ('value' in p) setKnob(knobs, k.path, p.value);
    return 'done';
  }
  const descriptions = rule?.['x-enumDescriptions'] ?? [];
  const off = vscode.l10n.t('off');
  const values: (string | null)[] = k.kind === 'auto' ? [null, ...knobChoices(k.path)] : knobChoices(k.path);
  const items = values.map((v) => ({
    label: v === null ? off : v,
    value: v,
    description: v === knobDefault(k.path) ? vscode.l10n.t('default') : undefined,
    detail:
      v !== null && rule?.enum
        ? described(descriptions[rule.enum.indexOf(v)] ?? '').replace(/`/g, '') || undefined
        : undefined,
  }));
  const current = k.path in knobs ? knobs[k.path] : knobDefault(k.path);
  const r = await pick({
    ...info,
    back: true,
    items,
    placeholder: prompt,
    active: current === null ? off : String(current),
  });
  if (r === BACK || r === undefined) return r;
  setKnob(knobs, k.path, r.value);
  return 'done';
}
